"""The installable core: the artifact format, the training recipe's rules, the analysis of what TRL
trains, and the recorder of TRL training runs. `pip install .` installs this one top-level name."""
