"""The one exception type that means "the user asked for something invalid".

Entry scripts turn a UserError into a single line on stderr and exit code 2
(see resolver.cli.run_main); anything else is a bug and keeps its traceback.
"""


class UserError(Exception):
    """Bad input: a message that says what is wrong and what would be valid."""


def choices_text(valid) -> str:
    """Render a collection of valid choices for an error message."""
    return ", ".join(str(v) for v in sorted(valid, key=str)) or "(none)"
