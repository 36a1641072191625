"""The one exception type that reaches the user as a message instead of a traceback."""


class BuildlogError(Exception):
    """A problem with the user's input or store; the CLI prints it and exits with code 2."""
