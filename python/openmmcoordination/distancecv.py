"""The distance between two particles as a collective variable of Metadynamics and OPES, alone or
beside coordination numbers (PLUMED's DISTANCE, with COMPONENTS and NOPBC).

>>> from openmmcoordination import DistanceCV
>>> pairSystem, _ = newSystem()                                   # a System of its own
>>> nao = CoordinationForce([na], oxygens); nao.setR0(0.31); nao.setUsesPeriodicBoundaryConditions(True)
>>> d = DistanceCV(na, cl)           # PLUMED: DISTANCE ATOMS=na,cl (nearest image: the System is periodic)
>>> pairMeta = Metadynamics(pairSystem, [BiasVariable(d, 0.2, 1.2, 0.05, gridWidth=101),
...                                      BiasVariable(nao, 2.0, 8.0, 0.2, gridWidth=61)],
...                         300*kelvin, 6, 1.0*kilojoules_per_mole, 500)
>>> print(pairMeta.force.isDistance(0), pairMeta.force.isDistance(1))   # True False

Alone or beside CoordinationForces, a DistanceCV is a CV of the bias's CoordinationBiasForce itself
(CoordinationBiasForce.addDistance): it is evaluated in the same bias evaluation as the
coordination numbers, on CUDA inside the chain-rule kernel. Beside a force that is neither a
CoordinationForce nor a DistanceCV (the slower CustomCVForce path) it becomes an OpenMM force of
its own (toForce()): a CustomBondForce for the length, a CustomCompoundBondForce for a component
without the nearest image; a component with the nearest image has no such force and is refused
there. The nearest image is the shortest (PLUMED's); on the slower path it is OpenMM's own, the
image of its reduced box, which in a triclinic box is the shortest only up to half the smallest box
width.
"""

import numbers

import openmm

__all__ = ['DistanceCV']

#: PLUMED's component names and CoordinationBiasForce.addDistance's component numbers.
_COMPONENTS = {None: -1, 'x': 0, 'y': 1, 'z': 2}


def _fail(message, *args):
    return ValueError('DistanceCV: ' + (message % args if args else message))


class DistanceCV(object):
    """A distance CV: the length of r = r(particle2) - r(particle1) in nm, or one component of r,
    with the nearest periodic image unless usePeriodic is False. Usable as the ``force`` of a
    BiasVariable of Metadynamics and OPES, and as one of a CVFunction's forces.

    Parameters
    ----------
    particle1, particle2: int
        the two particles (distinct, >= 0)
    component: None, 'x', 'y' or 'z'
        None for the length |r|, else that component of r (PLUMED's COMPONENTS: d.x, d.y, d.z)
    usePeriodic: None, True or False
        whether r is the nearest periodic image (False: PLUMED's NOPBC); None (the default): the
        System's choice, periodic where the System of the Metadynamics or OPES object uses periodic
        boundary conditions

    Raises ValueError naming the class, the parameter and the value for a bad argument.
    """

    def __init__(self, particle1, particle2, component=None, usePeriodic=None):
        for name, value in (('particle1', particle1), ('particle2', particle2)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise _fail('%s must be a particle index (an integer >= 0), got %r', name, value)
        if particle1 == particle2:
            raise _fail('particle1 and particle2 must differ, got %r twice', particle1)
        if component not in _COMPONENTS:
            raise _fail("component must be None (the length), 'x', 'y' or 'z', got %r", component)
        if usePeriodic is not None and not isinstance(usePeriodic, bool):
            raise _fail('usePeriodic must be None, True or False, got %r', usePeriodic)
        self.particle1 = int(particle1)
        self.particle2 = int(particle2)
        self.component = component
        self.usePeriodic = usePeriodic

    def componentIndex(self):
        """The component as CoordinationBiasForce.addDistance takes it: -1 (the length), 0, 1 or 2."""
        return _COMPONENTS[self.component]

    def usesPeriodicBoundaryConditions(self, systemPeriodic=False):
        """Whether the distance takes the nearest periodic image (usePeriodic, or where it is None
        systemPeriodic: whether the System uses periodic boundary conditions)."""
        return systemPeriodic if self.usePeriodic is None else self.usePeriodic

    def addTo(self, biasForce, name, systemPeriodic=False):
        """Add this distance to a CoordinationBiasForce under a name; returns its CV index.
        systemPeriodic: whether the System uses periodic boundary conditions (for usePeriodic None)."""
        return biasForce.addDistance(name, self.particle1, self.particle2, self.componentIndex(),
                                     self.usesPeriodicBoundaryConditions(systemPeriodic))

    def toForce(self, systemPeriodic=False):
        """An OpenMM Force whose energy is this CV, for a CustomCVForce (the slower path): a
        CustomBondForce 'r' for the length, a CustomCompoundBondForce for a component without the
        nearest image. ValueError for a component with it (no OpenMM force computes that).
        systemPeriodic: as for addTo()."""
        periodic = self.usesPeriodicBoundaryConditions(systemPeriodic)
        if self.component is None:
            force = openmm.CustomBondForce('r')
            force.addBond(self.particle1, self.particle2, [])
        elif not periodic:
            force = openmm.CustomCompoundBondForce(2, '%s2-%s1' % (self.component, self.component))
            force.addBond([self.particle1, self.particle2], [])
        else:
            raise _fail("component %r with usePeriodic=True is computed only inside a CoordinationBiasForce (with "
                        'CoordinationForces and DistanceCVs, no other kind of force); give usePeriodic=False or the length',
                        self.component)
        force.setUsesPeriodicBoundaryConditions(periodic)
        return force

    def __repr__(self):
        return 'DistanceCV(%d, %d%s%s)' % (self.particle1, self.particle2,
                                           '' if self.component is None else ', component=%r' % self.component,
                                           '' if self.usePeriodic is None else ', usePeriodic=%r' % self.usePeriodic)
