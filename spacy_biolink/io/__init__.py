"""Files in and out: the one opener for user files and the atomic writer (files.py), small
array and path helpers (util.py), name-pair files (pair_files.py), `--section.key`
overrides checked against the config they change (config_overrides.py), and the checks a
received model must pass before anything is read into it (safe_models.py)."""
