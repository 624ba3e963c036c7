"""The grammar :mod:`core.xpaths` accepts: users' XPath expressions tokenised and checked by a
small recursive-descent parser that refuses what libxml2 would not run in linear time (the
reasons and measurements are :mod:`core.xpaths`'s docstring), and weighs what it accepts.
"""

from __future__ import annotations

import re

#: Descendant steps (``//``, ``descendant::``, ``descendant-or-self::``) in one expression.
MAX_DESCENDANT_STEPS = 1
#: Brackets (parentheses, predicates, a function's) inside each other: the checks recurse.
MAX_NESTING = 16

#: Function → (least, most arguments, what its node-set arguments may be: "strings" (attribute
#: and text nodes only), "any" (tested for existence or read for names)).
FUNCTIONS: dict[str, tuple[int, int, str]] = {
    "contains": (2, 2, "strings"), "starts-with": (2, 2, "strings"),
    "normalize-space": (1, 1, "strings"), "string": (1, 1, "strings"),
    "concat": (2, 20, "strings"), "translate": (3, 3, "strings"),
    "string-length": (1, 1, "strings"), "number": (1, 1, "strings"),
    "boolean": (1, 1, "any"), "not": (1, 1, "any"), "true": (0, 0, "any"),
    "false": (0, 0, "any"), "position": (0, 0, "any"), "last": (0, 0, "any"),
    "name": (0, 1, "any"), "local-name": (0, 1, "any"),
}
#: The functions that read text, and the passes over it each costs: translate() reads it
#: character by character (15 ns a character, the others about 1; concat() is apart).
_TEXT_PASSES = {"contains": 1, "starts-with": 1, "normalize-space": 1, "string": 1,
                "translate": 16, "string-length": 1, "number": 1}
_AXES = {"child", "attribute", "self", "descendant", "descendant-or-self"}
_DESCENDANT_AXES = {"descendant", "descendant-or-self"}
_OUTWARD_AXES = {"parent", "ancestor", "ancestor-or-self", "following", "following-sibling",
                 "preceding", "preceding-sibling"}
_NODE_TYPES = {"text", "node", "comment", "processing-instruction"}
_LEVELS = (("or",), ("and",), ("=", "!="), ("<", ">", "<=", ">="), ("+", "-"),
           ("*", "div", "mod"))
_COMPARISONS = {"=", "!=", "<", ">", "<=", ">="}
_TOKEN = re.compile(r"""\s*(?:
      (?P<literal>"[^"]*"|'[^']*')
    | (?P<number>\d+(?:\.\d*)?|\.\d+)
    | (?P<op>//|::|\.\.|!=|<=|>=|[/().\[\]@,|=<>+\-*$])
    | (?P<name>[^\W\d][\w.\-]*(?::(?:[^\W\d][\w.\-]*|\*))?)
    )""", re.VERBOSE)

#: What an expression gives: elements (or any nodes), attribute or text nodes, or a value
#: (string, number, boolean).
ELEMENTS, STRINGS, VALUE = "elements", "strings", "value"


class XPathInvalid(ValueError):
    """An expression that cannot be used; the message says why, in words."""


Token = tuple[str, str, int, int]  # kind, value, start, end


def tokens(text: str) -> list[Token]:
    tokens: list[Token] = []
    position = 0
    while text[position:].strip():
        match = _TOKEN.match(text, position)
        if match is None or match.lastgroup is None:
            at = len(text) - len(text[position:].lstrip())
            raise XPathInvalid(f"Not a valid XPath: unexpected {text[at]!r} at character "
                               f"{at + 1}.")
        tokens.append((match.lastgroup, match.group(match.lastgroup), match.start(match.lastgroup),
                       match.end()))
        position = match.end()
    return tokens


def branches(tokens: list[Token]) -> list[list[Token]]:
    """The expression split at each ``|`` outside brackets (those inside are refused), its
    brackets nested at most :data:`MAX_NESTING` deep."""
    branches: list[list[Token]] = [[]]
    depth = 0
    for token in tokens:
        kind, value = token[0], token[1]
        if kind == "op" and value in ("(", "["):
            depth += 1
            if depth > MAX_NESTING:
                raise XPathInvalid(f"Brackets may nest at most {MAX_NESTING} deep in an XPath.")
        elif kind == "op" and value in (")", "]"):
            depth -= 1
        if kind == "op" and value == "|":
            if depth:
                raise XPathInvalid("| may only join whole expressions (.//h2 | .//h3), not "
                                   "inside brackets: a union of overlapping sets is quadratic "
                                   "in libxml2.")
            branches.append([])
        else:
            branches[-1].append(token)
    if not all(branches):
        raise XPathInvalid("Not a valid XPath: | needs an expression on each side.")
    return branches


class Parser:
    """Recursive descent over one branch's tokens (XPath 1.0's grammar), refusing what is not
    linear; each rule returns what its expression gives."""

    def __init__(self, tokens: list[Token], absolute: bool) -> None:
        self.tokens, self.i, self.absolute = tokens, 0, absolute
        self.nested = 0  # inside a predicate, a function's arguments or parentheses
        self.descents = 0
        self.text_ops = 0
        self.below = False  # a child or descendant step somewhere
        self.inner = 0  # tokens inside a predicate or a function's arguments

    def parse(self) -> str:
        kind = self._binary(0)
        if self.i < len(self.tokens):
            self._unexpected()
        return kind

    # --- tokens ---------------------------------------------------------------------------

    def _peek(self, ahead: int = 0) -> Token | None:
        index = self.i + ahead
        return self.tokens[index] if index < len(self.tokens) else None

    def _at(self, *values: str, ahead: int = 0, kinds: tuple[str, ...] = ("op",)) -> bool:
        token = self._peek(ahead)
        return token is not None and token[0] in kinds and token[1] in values

    def _take(self) -> Token:
        token = self._peek()
        if token is None:
            raise XPathInvalid("Not a valid XPath: it ends too early.")
        self.i += 1
        if self.nested:
            self.inner += 1
        return token

    def _expect(self, value: str) -> None:
        if not self._at(value):
            self._unexpected(f"{value} expected")
        self.i += 1

    def _unexpected(self, wanted: str = "") -> None:
        token = self._peek()
        if token is None:
            raise XPathInvalid(f"Not a valid XPath: it ends too early ({wanted}).")
        raise XPathInvalid(f"Not a valid XPath: unexpected {token[1]} at character "
                           f"{token[2] + 1}" + (f" ({wanted})." if wanted else "."))

    # --- expressions ----------------------------------------------------------------------

    def _binary(self, level: int) -> str:
        if level == len(_LEVELS):
            return self._unary()
        kind = self._binary(level + 1)
        while self._at(*_LEVELS[level], kinds=("op", "name")):
            operator = self._take()[1]
            right = self._binary(level + 1)
            if operator not in ("and", "or"):
                self._operands(operator, kind, right)
            kind = VALUE
        return kind

    def _operands(self, operator: str, left: str, right: str) -> None:
        if ELEMENTS in (left, right):
            raise XPathInvalid(f"The operands of {operator} may not be elements: an element's "
                               "value is its whole text, read again for each element tried "
                               "(quadratic on nested elements); use its text() or an "
                               "@attribute, or read the text with a text field.")
        if operator in _COMPARISONS:
            if left != VALUE and right != VALUE:
                raise XPathInvalid(f"{operator} between two node-sets compares every pair; "
                                   "compare one with a string or a number.")
            self.text_ops += 1

    def _unary(self) -> str:
        negated = False
        while self._at("-"):
            self._take()
            negated = True
        kind = self._path()
        if negated:
            self._operands("-", kind, VALUE)
            return VALUE
        return kind

    def _path(self) -> str:
        if self._at("/", "//"):
            return self._absolute()
        if self._starts_step():
            return self._relative()
        kind = self._primary()
        while self._at("["):
            if kind == VALUE:
                self._unexpected("a predicate applies to a node-set")
            self._predicate()
        if self._at("/", "//"):
            if kind == VALUE:
                self._unexpected("only a node-set has steps")
            if self._take()[1] == "//":
                self._descend(False)
            return self._relative(single=False)
        return kind

    def _absolute(self) -> str:
        if not self.absolute:
            raise XPathInvalid("A field's XPath starts at its record: write .//h2, not //h2 "
                               "(which reads the whole page again for each record).")
        if self.nested:
            raise XPathInvalid("An XPath may start at the page's root (/ or //) only at its "
                               "beginning: inside a predicate or a function it reads the whole "
                               "page again for each element.")
        if self._take()[1] == "//":
            self._descend(True)
            self.below = True
            return self._relative(single=False)
        if not self._starts_step():
            return ELEMENTS  # "/": the document
        return self._relative()

    def _starts_step(self) -> bool:
        token = self._peek()
        if token is None:
            return False
        if token[0] == "op":
            return token[1] in (".", "..", "@", "*")
        return token[0] == "name" and (not self._at("(", ahead=1) or token[1] in _NODE_TYPES)

    def _relative(self, single: bool = True) -> str:
        """Steps joined by / or //; ``single``: whether the path's context is one node (its
        start, or after ``.``), the only place a descent is linear."""
        kind, single = self._step(single)
        while self._at("/", "//"):
            if self._take()[1] == "//":
                self._descend(single)
                single = False
            kind, single = self._step(single)
        return kind

    def _step(self, single: bool) -> tuple[str, bool]:
        """One step: what it gives, and whether its context is still one node."""
        if self._at(".."):
            raise XPathInvalid(self._outward("parent"))
        if self._at("."):
            self._take()
            return ELEMENTS, single
        axis = "child"
        if self._at("@"):
            self._take()
            axis = "attribute"
        elif self._at("::", ahead=1):
            axis = self._take()[1]
            self._take()
            if axis in _OUTWARD_AXES:
                raise XPathInvalid(self._outward(axis))
            if axis not in _AXES:
                raise XPathInvalid(f"Unsupported axis {axis}:: (supported: "
                                   f"{', '.join(sorted(_AXES))}).")
            if axis in _DESCENDANT_AXES:
                self._descend(single)
        kind = ELEMENTS
        self.below = self.below or axis not in ("self", "attribute")
        token = self._take()
        if token[0] == "name" and token[1] in _NODE_TYPES and self._at("("):
            if token[1] in ("comment", "processing-instruction"):
                raise XPathInvalid(f"{token[1]}() selects no content; select elements, "
                                   "text() or @attributes.")
            self._take()
            self._expect(")")
            kind = STRINGS if token[1] == "text" else ELEMENTS
        elif token[0] == "name" and ":" in token[1]:
            raise XPathInvalid(f"Namespace prefixes ({token[1]}) are not supported: the "
                               "elements of an HTML page have none.")
        elif not (token[0] == "name" or token[:2] == ("op", "*")):
            self.i -= 1
            self._unexpected("a step expected")
        while self._at("["):
            self._predicate()
        return (STRINGS if axis == "attribute" else kind), False

    def _outward(self, axis: str) -> str:
        return (f"An XPath may not use the {axis} axis: it leaves the element it starts from, "
                "and from every element of a long list it reads the rest of the list (quadratic); "
                "select within the element instead.")

    def _descend(self, single: bool) -> None:
        self.descents += 1
        if self.descents > MAX_DESCENDANT_STEPS or not single:
            raise XPathInvalid(
                "An XPath may descend (// or a descendant axis) once, at the start of a path "
                "(.//h2, not .//div//h2): libxml2 compares each element found below each "
                "element with all found before (//li//text() took 4 s on a list of 50,000 "
                "items). A CSS selector (div h2) matches that in linear time.")

    def _predicate(self) -> None:
        self._take()
        self.nested += 1
        self._binary(0)
        self.nested -= 1
        self._expect("]")

    def _primary(self) -> str:
        token = self._take()
        kind, value = token[0], token[1]
        if (kind, value) == ("op", "$"):
            raise XPathInvalid("Variables ($name) are not supported: a schema gives none.")
        if (kind, value) == ("op", "("):
            self.nested += 1
            inner = self._binary(0)
            self.nested -= 1
            self._expect(")")
            return inner
        if kind in ("literal", "number"):
            return VALUE
        if kind == "name" and self._at("("):
            self._function(value)
            return VALUE
        self.i -= 1
        self._unexpected()
        return VALUE  # not reached

    def _function(self, name: str) -> None:
        if name not in FUNCTIONS:
            raise XPathInvalid(f"Unsupported function {name}() (supported: "
                               f"{', '.join(f'{n}()' for n in sorted(FUNCTIONS))}).")
        least, most, accepts = FUNCTIONS[name]
        self._take()
        self.nested += 1
        arguments: list[str] = []
        if not self._at(")"):
            arguments.append(self._binary(0))
            while self._at(","):
                self._take()
                arguments.append(self._binary(0))
        self.nested -= 1
        self._expect(")")
        if not least <= len(arguments) <= most:
            if least == 1 and not arguments and accepts == "strings":
                raise XPathInvalid(f"{name}() needs an argument here: without one it reads the "
                                   f"whole text of each element; write {name}(text()).")
            count = str(least) if least == most else f"{least} to {most}"
            raise XPathInvalid(f"{name}() takes {count} argument{'s' if most != 1 else ''}, "
                               f"not {len(arguments)}.")
        if accepts == "strings" and ELEMENTS in arguments:
            raise XPathInvalid(f"The arguments of {name}() may not be elements: an element's "
                               "value is its whole text, read again for each element tried "
                               "(quadratic on nested elements); use its text() or an "
                               "@attribute, or read the text with a text field.")
        if name in ("name", "local-name") and VALUE in arguments:
            raise XPathInvalid(f"{name}() takes a node-set.")
        if name == "concat":  # copies what it has joined at each argument
            self.text_ops += len(arguments) * (len(arguments) + 1) // 2
        self.text_ops += _TEXT_PASSES.get(name, 0)
