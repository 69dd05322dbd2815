"""The one base class of the errors a user can cause: `nmt`'s main catches it and prints its message as one line,
exit status 2, never a traceback. Each subclass lives beside the code that raises it (CorpusError in
nmt.data.text, FetchError in nmt.data.fetch, ...; ConfigError is here, as every layer reads configuration) and its
message names the file, line or key and the problem.

It depends on nothing, so that every layer may raise one."""

from __future__ import annotations


def first_line(err: object, limit: int = 160) -> str:
    """The first non-blank line of an error's text, shortened to ``limit`` characters: what a one-line message
    quotes of a library's (often many-line) error."""
    line = next((ln.strip() for ln in str(err).splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


class UserError(Exception):
    """Bad input, not a bug: the message says which file, line or key, and what is wrong with it."""


class InputError(UserError, ValueError):
    """A file given on the command line does not fit what the command needs (line counts, vocabularies, links)."""


class ConfigError(UserError, ValueError):
    """A configuration problem; the message names the file and the key."""
