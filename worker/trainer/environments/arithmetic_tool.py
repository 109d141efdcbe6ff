"""The calculator's one operation: an arithmetic expression evaluated without eval, so that what
a model writes can never run as code.

What a model (or a dry run's user) writes is untrusted: `(((9**64)**64)**64)**64` is 37
characters and would take hours of one core. So each operation's result size is estimated from
its operands' bit lengths BEFORE it is computed, and refused past MAX_RESULT_BITS (well under
Python's 4300-digit int-to-text limit). Every failure, including the arithmetic's own
(division by zero, float overflow), is a CalculationError: the model gets it back as a tool
message and may try again; the episode goes on.
"""
import ast
import math
import operator
from collections.abc import Callable

# Unary and binary alike: the node's type says how many operands it is given.
OPERATORS: dict[type[ast.AST], Callable[..., int | float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.USub: operator.neg, ast.UAdd: operator.pos}
MAX_EXPONENT = 64
MAX_LENGTH = 200
MAX_DEPTH = 40               # operators nested in one another; 200 characters allow about 100
MAX_RESULT_BITS = 4096       # about 1233 decimal digits


class CalculationError(ValueError):
    """The expression is not arithmetic this calculator does; the message says why, for the model."""


def calculate(expression) -> str:
    """The expression's value as text, or CalculationError saying why not (never another error)."""
    expression = _text(expression)
    if not expression:
        raise CalculationError("empty expression")
    if len(expression) > MAX_LENGTH:
        raise CalculationError(f"expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(expression, mode="eval")
        value = _value(tree.body, depth=0)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return str(round(value, 6) if isinstance(value, float) else value)
    except CalculationError:
        raise
    except SyntaxError:
        raise CalculationError(f"cannot read {expression!r} as arithmetic") from None
    except ZeroDivisionError:
        raise CalculationError("division by zero") from None
    except (OverflowError, ValueError, MemoryError, RecursionError) as exc:
        # Bounds above make these unlikely; what is left still answers the model, not the run.
        raise CalculationError(f"the result is out of range ({exc})") from None


def _text(expression) -> str:
    """A hermes call may give the expression as a JSON number; anything else is not arithmetic."""
    if isinstance(expression, (int, float)) and not isinstance(expression, bool):
        expression = str(expression)
    if not isinstance(expression, str):
        raise CalculationError(f"the expression must be text, not {type(expression).__name__}")
    return expression.strip().replace("×", "*").replace("÷", "/").replace(",", "")


def _value(node, depth: int):
    if depth > MAX_DEPTH:
        raise CalculationError(f"more than {MAX_DEPTH} operations nested in one another")
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return _checked(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_value(node.operand, depth + 1))
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        left, right = _value(node.left, depth + 1), _value(node.right, depth + 1)
        _refuse_too_large(node.op, left, right)
        return _checked(OPERATORS[type(node.op)](left, right))
    raise CalculationError("only numbers and + - * / // % ** and parentheses")


def _refuse_too_large(op: ast.operator, left, right) -> None:
    """Refuses an operation whose result would pass MAX_RESULT_BITS, before it is computed."""
    if isinstance(op, ast.Pow):
        if abs(right) > MAX_EXPONENT:
            raise CalculationError(f"exponent above {MAX_EXPONENT}")
        if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1 \
                and _bits(left) * right > MAX_RESULT_BITS:
            raise _too_large()
    elif isinstance(op, ast.Mult) and isinstance(left, int) and isinstance(right, int):
        if _bits(left) + _bits(right) > MAX_RESULT_BITS:
            raise _too_large()


def _checked(value):
    """A result the calculator can show: a real, finite number of at most MAX_RESULT_BITS."""
    if isinstance(value, complex):
        raise CalculationError("the result is not a real number")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculationError("the result is too large (not a finite number)")
    if isinstance(value, int) and _bits(value) > MAX_RESULT_BITS:
        raise _too_large()
    return value


def _bits(value: int) -> int:
    return abs(value).bit_length()


def _too_large() -> CalculationError:
    return CalculationError(f"the result would have more than {MAX_RESULT_BITS} bits "
                            f"(about {int(MAX_RESULT_BITS * math.log10(2))} digits)")
