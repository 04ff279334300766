"""What a cell is, in the terms every layer shares: its identity hash (``identity``), its seeds
(``seeds``) and its record (``records``)."""
