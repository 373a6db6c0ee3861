"""``ke sweep DIR``: every KernelBench-format problem of a folder searched as one resumable campaign, then a
matrix per level. Modules: ``problems`` finds and selects the problems, ``metrics`` holds the field's figures
(correct rate, fast_p, geomeans) as pure functions, ``matrix`` builds the report from the store, ``markdown``
writes it beside the published reference points."""
