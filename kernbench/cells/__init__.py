"""What a cell is, in the terms every layer shares: its identity hash (``identity``), its seeds
(``seeds``), its record (``records``), the split protocol it runs under (``protocol``) and where
an outside method comes from (``sources``)."""
