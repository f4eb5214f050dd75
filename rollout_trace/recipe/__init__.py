"""Rules of the training example (TRL's opencode_hf_sandbox.py) that capture and viewer both apply.

See docs/design.md: which proxy calls are agent turns, and how the verifier
score becomes the reward.
"""
