"""The ground floor: reading shell text, and nothing else (no process is started here).

Every pass over command text reads it here, so they never disagree on where a quote, a substitution
or a heredoc ends: templating asks where a value stands, the guard what the words are, the standby
whether a script surely parses.  Modules, one job each:

- the walk: ``frames`` (what is open at a position, as a stack that answers in constant time),
  ``walk_bodies`` (what the walk does where one text holds another: backticks, heredoc bodies, the
  ends it notes for readings begun inside them), ``walk`` (the walk itself: the context at each
  offset, for templating), ``ends`` (where a substitution ends: the same walk, begun inside it);
- the words: ``words`` (a word, an operator, the redirection operators), ``lexer`` (the text split
  into words and operators as a shell splits it, for the guard and the standby), ``stretches`` (what it reads
  at once: plain stretches, quoted words), ``sources`` (each token with the text it was read from), ``braces``
  (the words bash's brace expansion makes of one, for the guard);
- ``plain_syntax`` (scripts bash surely accepts, told from the tokens), ``scanning`` (the loop the
  walk shares with the Python and JavaScript template scanners), ``work`` (every step counted
  against a budget linear in the text);
- ``patterns`` (every layer's module-level regexes, compiled on first use rather than at import).

Nothing is re-exported here: import from the modules themselves.
"""

from __future__ import annotations

__all__: list[str] = []
