"""Lepton expressions on the host, for openmmcoordination.plumed: PLUMED's CUSTOM and MATHEVAL
functions and OpenMM's energy expressions share Lepton's syntax, so a FUNC goes into a
CoordinationBiasForce as written. This module checks such an expression (only variables it may use,
only functions OpenMM's Lepton has), renames its variables, and evaluates it at given values (for
PRINT of a function or of a bias, which live on the device only as part of an energy).

>>> expression = Expression('0.5*k*(x-1)^2 + step(x)', ['x', 'k'])
>>> expression.evaluate({'x': 3.0, 'k': 2.0})
5.0
>>> substitute('x^2 + y', {'x': 'c1', 'y': '(c2 - 1)'})
'(c1)^2 + ((c2 - 1))'
"""

import ast
import math
import operator
import re

__all__ = ['Expression', 'substitute', 'withConstants', 'FUNCTIONS', 'CONSTANTS']


def _step(x):
    return 1.0 if x >= 0 else 0.0


#: The functions of OpenMM's Lepton, with their values (Lepton's definitions: step(0) = 1, delta(0) = 1,
#: select(x, y, z) = y where x != 0, else z).
FUNCTIONS = {
    'sqrt': math.sqrt, 'exp': math.exp, 'log': math.log, 'sin': math.sin, 'cos': math.cos,
    'sec': lambda x: 1/math.cos(x), 'csc': lambda x: 1/math.sin(x), 'tan': math.tan, 'cot': lambda x: 1/math.tan(x),
    'asin': math.asin, 'acos': math.acos, 'atan': math.atan, 'atan2': math.atan2, 'sinh': math.sinh,
    'cosh': math.cosh, 'tanh': math.tanh, 'erf': math.erf, 'erfc': math.erfc, 'step': _step,
    'delta': lambda x: 1.0 if x == 0 else 0.0, 'square': lambda x: x*x, 'cube': lambda x: x*x*x,
    'recip': lambda x: 1/x, 'min': min, 'max': max, 'abs': abs, 'floor': math.floor, 'ceil': math.ceil,
    'select': lambda x, y, z: y if x != 0 else z,
}

#: The constants of PLUMED's Lepton (src/lepton: Constants()), which OpenMM's Lepton does not know: a
#: FUNC that names one gets its value written out (PLUMED replaces the name before it binds variables).
CONSTANTS = {'e': math.e, 'log2e': math.log2(math.e), 'log10e': math.log10(math.e), 'ln2': math.log(2.0),
             'ln10': math.log(10.0), 'pi': math.pi, 'pi_2': math.pi/2, 'pi_4': math.pi/4, 'sqrt2': math.sqrt(2.0),
             'sqrt1_2': math.sqrt(0.5)}


def withConstants(expression):
    """The expression with PLUMED's Lepton constants (CONSTANTS) written as numbers, and the names of
    those it used."""
    used = sorted(set(m.group(1) for m in _IDENTIFIER.finditer(expression)) & set(CONSTANTS))
    return substitute(expression, {name: repr(CONSTANTS[name]) for name in used}), used


#: d f(u)/du of the functions of one argument, given u and f(u) (Lepton's: step, delta, floor and
#: ceil have derivative 0; abs has step(u)*2 - 1).
_SLOPES = {
    'sqrt': lambda u, f: 0.5/f, 'exp': lambda u, f: f, 'log': lambda u, f: 1/u, 'sin': lambda u, f: math.cos(u),
    'cos': lambda u, f: -math.sin(u), 'sec': lambda u, f: f*math.tan(u), 'csc': lambda u, f: -f/math.tan(u),
    'tan': lambda u, f: 1 + f*f, 'cot': lambda u, f: -1 - f*f, 'asin': lambda u, f: 1/math.sqrt(1 - u*u),
    'acos': lambda u, f: -1/math.sqrt(1 - u*u), 'atan': lambda u, f: 1/(1 + u*u), 'sinh': lambda u, f: math.cosh(u),
    'cosh': lambda u, f: math.sinh(u), 'tanh': lambda u, f: 1 - f*f,
    'erf': lambda u, f: 2/math.sqrt(math.pi)*math.exp(-u*u), 'erfc': lambda u, f: -2/math.sqrt(math.pi)*math.exp(-u*u),
    'step': lambda u, f: 0.0, 'delta': lambda u, f: 0.0, 'square': lambda u, f: 2*u, 'cube': lambda u, f: 3*u*u,
    'recip': lambda u, f: -1/(u*u), 'abs': lambda u, f: 1.0 if u >= 0 else -1.0, 'floor': lambda u, f: 0.0,
    'ceil': lambda u, f: 0.0,
}

_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.Pow: lambda a, b: math.pow(a, b)}
_IDENTIFIER = re.compile(r'(?<![\w.])([A-Za-z_][A-Za-z0-9_]*)\b(?!\s*\()')


def substitute(expression, mapping):
    """The expression with each variable of ``mapping`` replaced by its value in parentheses
    (function names and the exponents of numbers such as 1e-3 are left alone)."""
    return _IDENTIFIER.sub(lambda m: '(%s)' % mapping[m.group(1)] if m.group(1) in mapping else m.group(1), expression)


class Expression(object):
    """A Lepton expression of the named variables, checked when created: a ValueError names what
    cannot be read, an unknown function or a variable not in ``variables``."""

    def __init__(self, text, variables):
        self.text = text
        self.variables = list(variables)
        try:
            tree = ast.parse(text.replace('^', '**').strip(), mode='eval')
        except SyntaxError:
            raise ValueError('cannot read the expression %r' % text) from None
        self._check(tree.body)
        self._tree = tree.body

    def _check(self, node):
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            self._check(node.left)
            self._check(node.right)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            self._check(node.operand)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            if node.func.id not in FUNCTIONS:
                raise ValueError('%s() in %r is not a function of OpenMM\'s Lepton (%s)'
                                 % (node.func.id, self.text, ', '.join(sorted(FUNCTIONS))))
            for argument in node.args:
                self._check(argument)
        elif isinstance(node, ast.Name):
            if node.id not in self.variables:
                raise ValueError('%r in %r is not a variable of it (%s)' % (node.id, self.text, ', '.join(self.variables)))
        elif not (isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
                  and not isinstance(node.value, bool)):
            raise ValueError('%r is not a Lepton expression (at %r)' % (self.text, ast.unparse(node)))

    def evaluate(self, values):
        """The value at ``values`` ({variable: number}); NaN where Lepton's would not be finite."""
        try:
            return float(self._evaluate(self._tree, values))
        except (ValueError, ZeroDivisionError, OverflowError):
            return math.nan

    def gradient(self, values):
        """The analytic derivatives of the expression with respect to each of its variables, at
        ``values`` ({variable: number}), in the order of ``variables`` (forward-mode differentiation
        of the expression tree, with each function's derivative as Lepton takes it); NaN, as evaluate(),
        where the value or a derivative would not be finite."""
        names = list(self.variables)
        try:
            return [float(d) for d in self._dual(self._tree, values, names)[1]]
        except (ValueError, ZeroDivisionError, OverflowError):
            return [math.nan]*len(names)

    def _dual(self, node, values, names):
        """(value, gradient over ``names``) of a node."""
        count = len(names)
        if isinstance(node, ast.Constant):
            return float(node.value), [0.0]*count
        if isinstance(node, ast.Name):
            return float(values[node.id]), [1.0 if name == node.id else 0.0 for name in names]
        if isinstance(node, ast.UnaryOp):
            v, d = self._dual(node.operand, values, names)
            return (-v, [-x for x in d]) if isinstance(node.op, ast.USub) else (v, d)
        if isinstance(node, ast.BinOp):
            a, da = self._dual(node.left, values, names)
            b, db = self._dual(node.right, values, names)
            if isinstance(node.op, ast.Add):
                return a + b, [x + y for x, y in zip(da, db)]
            if isinstance(node.op, ast.Sub):
                return a - b, [x - y for x, y in zip(da, db)]
            if isinstance(node.op, ast.Mult):
                return a*b, [x*b + a*y for x, y in zip(da, db)]
            if isinstance(node.op, ast.Div):
                return a/b, [(x*b - a*y)/(b*b) for x, y in zip(da, db)]
            value = math.pow(a, b)
            if not any(db):
                return value, [b*math.pow(a, b - 1)*x for x in da]
            return value, [value*(y*math.log(a) + b*x/a) for x, y in zip(da, db)]
        arguments = [self._dual(argument, values, names) for argument in node.args]
        name = node.func.id
        if name in ('min', 'max'):
            (a, da), (b, db) = arguments
            first = (a <= b) if name == 'min' else (a >= b)
            return (a, da) if first else (b, db)
        if name == 'select':
            (c, _), (a, da), (b, db) = arguments
            return (a, da) if c != 0 else (b, db)
        if name == 'atan2':
            (y, dy), (x, dx) = arguments
            return math.atan2(y, x), [(x*p - y*q)/(x*x + y*y) for p, q in zip(dy, dx)]
        (u, du), = arguments
        value = FUNCTIONS[name](u)
        slope = _SLOPES[name](u, value)
        return value, [slope*x for x in du]

    def _evaluate(self, node, values):
        if isinstance(node, ast.BinOp):
            return _OPERATORS[type(node.op)](self._evaluate(node.left, values), self._evaluate(node.right, values))
        if isinstance(node, ast.UnaryOp):
            value = self._evaluate(node.operand, values)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Call):
            return FUNCTIONS[node.func.id](*[self._evaluate(argument, values) for argument in node.args])
        if isinstance(node, ast.Name):
            return float(values[node.id])
        return float(node.value)
