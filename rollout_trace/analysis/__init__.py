"""Pure analysis of a validated artifact: no Gradio, no I/O. Each module answers one question."""
