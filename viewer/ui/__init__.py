"""The Gradio layer: thin wiring over viewer.render and viewer.analysis."""
