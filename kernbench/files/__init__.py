"""The user's files, read bounded (``reading``) and written without following planted links
(``writing``)."""
