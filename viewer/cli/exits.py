"""The command line's exit statuses (viewer/cli/__init__.py's docstring says what each means), and the text
`--help` shows of them."""

OK, INVALID, USAGE, INTERNAL, CANNOT_WRITE, INTERRUPTED, BROKEN_PIPE = 0, 1, 2, 3, 4, 130, 141
EXIT_CODES = """exit status:
  0    valid (check) / written (export)
  1    the artifact is invalid or cannot be read (every problem printed)
  2    usage error
  4    the output file cannot be written
  5    re-scoring failed
  130  interrupted
  141  the output pipe was closed (e.g. | head -1)
  3    internal error (a bug)"""
