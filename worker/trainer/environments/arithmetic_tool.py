"""The calculator's one operation: an arithmetic expression evaluated without eval, so that what
a model writes can never run as code."""
import ast
import operator

OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
             ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
             ast.USub: operator.neg, ast.UAdd: operator.pos}
MAX_EXPONENT = 64
MAX_LENGTH = 200


class CalculationError(ValueError):
    """The expression is not arithmetic this calculator does; the message says why, for the model."""


def calculate(expression: str) -> str:
    expression = expression.strip().replace("×", "*").replace("÷", "/").replace(",", "")
    if not expression:
        raise CalculationError("empty expression")
    if len(expression) > MAX_LENGTH:
        raise CalculationError(f"expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        raise CalculationError(f"cannot read {expression!r} as arithmetic") from None
    value = _value(tree.body)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(round(value, 6) if isinstance(value, float) else value)


def _value(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise CalculationError(f"exponent above {MAX_EXPONENT}")
        try:
            return OPERATORS[type(node.op)](left, right)
        except ZeroDivisionError:
            raise CalculationError("division by zero") from None
    raise CalculationError("only numbers and + - * / // % ** and parentheses")
