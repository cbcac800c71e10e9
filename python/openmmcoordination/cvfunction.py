"""A function of collective variables as one variable of Metadynamics or OPES: a Lepton expression
of named forces, each a CoordinationForce (or, on the slower path, any OpenMM Force that computes a
CV, as openmm.app's BiasVariable takes).

>>> from openmmcoordination import CVFunction
>>> shellSystem, _ = newSystem()                                  # a System of its own
>>> withCl = CoordinationForce([na], [cl]); withCl.setR0(0.35); withCl.setUsesPeriodicBoundaryConditions(True)
>>> withO = CoordinationForce([na], oxygens); withO.setR0(0.31); withO.setUsesPeriodicBoundaryConditions(True)
>>> shell = CVFunction('nao + 4*nacl', {'nao': withO, 'nacl': withCl})   # PLUMED: COMBINE ARG=nao,nacl COEFFICIENTS=1,4
>>> shellMeta = Metadynamics(shellSystem, [BiasVariable(shell, 2.0, 12.0, 0.15, gridWidth=201)], 300*kelvin, 6,
...                          1.0*kilojoules_per_mole, 500)
>>> print(shellMeta.force.getEnergyExpression())                    # bias((c1_nao) + 4*(c1_nacl))
>>> print(shell.evaluate([6.0, 0.5]), shell.gradient([6.0, 0.5]))   # 8.0 [1.0, 4.0]

Where every force is a CoordinationForce or a DistanceCV, the bias stays one CoordinationBiasForce: its energy is
the bias's table called on the expression, ``bias(c1_cd - c1_ca)``, so the table, the expression
and its chain rule are all evaluated on the Context's platform. The expression is also evaluated on
the host (the CV of each hill or kernel, and the frames recorded for reweighting), with Lepton's
functions as openmmcoordination.plumed.expressions defines them.
"""

import keyword
import re

import openmm

__all__ = ['CVFunction']

_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*\Z')


def _fail(message, *args):
    return ValueError('CVFunction: ' + (message % args if args else message))


class CVFunction(object):
    """A function of collective variables, usable as the ``force`` of a BiasVariable of Metadynamics
    and OPES (where a CoordinationForce may stand).

    Parameters
    ----------
    expression: str
        a Lepton expression (OpenMM's syntax: + - * / ^, sqrt, exp, log, min, max, step, select, ...)
        of the names of ``forces``
    forces: dict
        {name: force}, each force a CoordinationForce with the energy expression "cv" and no table
        or a DistanceCV (the bias then stays in one CoordinationBiasForce, with distances alone
        too), or any other OpenMM Force whose energy is the CV (a CustomBondForce distance, a CustomTorsionForce, an RMSDForce, ...: the bias is then
        applied by a CustomCVForce, the slower path). A name is a Lepton identifier; the forces must
        be in no System (the bias force adds copies of them).

    Raises ValueError naming the class, the parameter and the value where the expression cannot be
    read, uses a name that is not a key of ``forces``, or a force is not an OpenMM Force.
    """

    def __init__(self, expression, forces):
        from openmmcoordination.plumed.expressions import FUNCTIONS, Expression
        from openmmcoordination.distancecv import DistanceCV
        if not isinstance(expression, str) or not expression.strip():
            raise _fail('expression must be a non-empty string, got %r', expression)
        if not isinstance(forces, dict) or not forces:
            raise _fail('forces must be a non-empty dict {name: force}, got %r', forces)
        for name, force in forces.items():
            if not isinstance(name, str) or not _NAME.match(name) or keyword.iskeyword(name) or name in FUNCTIONS:
                raise _fail('forces: the name %r is not a Lepton variable name (letters, digits and _, not a function '
                            'name)', name)
            if not isinstance(force, (openmm.Force, DistanceCV)):
                raise _fail('forces[%r] must be an OpenMM Force, got %s', name, type(force).__name__)
        self.expression = expression
        self.names = list(forces)
        self.forces = [forces[name] for name in self.names]
        try:
            self._expression = Expression(expression, self.names)
        except ValueError as error:
            raise _fail('expression %r: %s', expression, error) from None
        try:
            # Lepton's own checks: a part without variables that is not a number (sqrt(-1)), on which
            # OpenMM's CustomCVForce would never finish simplifying the expression.
            from openmmcoordination import CoordinationBiasForce
            CoordinationBiasForce(expression)
        except openmm.OpenMMException as error:
            raise _fail('expression %r: %s', expression, error) from None

    def evaluate(self, values):
        """The function's value at the CVs ``values`` (one number per force, in the order of ``names``)."""
        return self._expression.evaluate(self._variables('evaluate', values))

    def gradient(self, values):
        """d f/d CV for each force (in the order of ``names``) at ``values``."""
        return self._expression.gradient(self._variables('gradient', values))

    def _variables(self, method, values):
        """{name: value} of one number per force, checked (a value short was a KeyError, one too many was
        ignored, a string was NaN)."""
        try:
            numbers = [float(value) for value in values]
        except (TypeError, ValueError):
            numbers = None
        if numbers is None or len(numbers) != len(self.names):
            raise _fail('%s: values must be %d numbers, one per force (%s), got %r', method, len(self.names),
                        ', '.join(self.names), values)
        return dict(zip(self.names, numbers))

    def renamed(self, prefix):
        """The expression with each name replaced by prefix + name (for the bias force, whose CVs have
        one name space)."""
        from openmmcoordination.plumed.expressions import substitute
        return substitute(self.expression, {name: prefix + name for name in self.names})

    def usesPeriodicBoundaryConditions(self):
        """Whether any of its forces uses periodic boundary conditions."""
        return any(force.usesPeriodicBoundaryConditions() for force in self.forces)

    def __repr__(self):
        return 'CVFunction(%r, {%s})' % (self.expression, ', '.join('%r: %s' % (n, type(f).__name__)
                                                                     for n, f in zip(self.names, self.forces)))
