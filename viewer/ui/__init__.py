"""The Gradio layer: thin wiring over viewer.render and rollout_trace.analysis."""
