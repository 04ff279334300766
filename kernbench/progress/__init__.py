"""How far a run has got and how long the rest will take.

``status`` reads a store's progress and estimates the remaining time from its done cells (the
time model the runner's longest-first order uses too); ``cost`` estimates a plan's time before
any cell is done (its constants in ``cost_calibration``); ``live`` is the progress line of a
run going on; ``lines`` puts all of these into the sentences the command line prints.
"""
