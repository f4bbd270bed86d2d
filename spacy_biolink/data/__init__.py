"""Package data: UMLS semantic groups (SemGroups.txt, NLM's 2018 table: GROUP|Group name|TUI|Type name)."""
