"""HTML fragments for the view, built from analysis results. Every string from a trace passes
through `safe.text` or `safe.markdown`; nothing here imports Gradio."""
