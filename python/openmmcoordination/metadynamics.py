"""Well-tempered metadynamics on a coordination number, biased through the CoordinationForce's own
tabulated energy (no CustomCVForce), so the bias stays on the GPU between hills.

The class has the constructor and methods of openmm.app.metadynamics.Metadynamics:

>>> cv = CoordinationForce(ions, oxygens); cv.setR0(0.32); cv.setUsesPeriodicBoundaryConditions(True)
>>> variable = BiasVariable(cv, minValue=2.0, maxValue=10.0, biasWidth=0.15)
>>> meta = Metadynamics(system, [variable], 300*kelvin, biasFactor=8, height=1.0*kilojoules_per_mole, frequency=500)
>>> simulation = Simulation(topology, system, integrator)          # after creating meta
>>> meta.step(simulation, 100000)
>>> meta.getFreeEnergy()                                         # kJ/mol on meta.getCollectiveVariableGrid()

Every ``frequency`` steps it reads the CV, evaluates the bias there, adds a well-tempered Gaussian
of height h exp(-V(cv)/(k_B dT)) to a grid on the host and replaces the force's table
(updateParametersInContext); the steps in between run entirely on the Context's platform.
"""

import copy
import os
import re

import numpy as np

import openmm
from openmm import unit
from openmm.app.metadynamics import BiasVariable

__all__ = ['Metadynamics', 'BiasVariable']


class Metadynamics(object):
    """Well-tempered metadynamics (Barducci, Bussi, Parrinello, PRL 100, 020603 (2008)) on one
    coordination number, with the bias applied by the CoordinationForce itself.

    Parameters (those of openmm.app.metadynamics.Metadynamics)
    ----------
    system: System
        the System to simulate. A copy of the variable's CoordinationForce, with the energy
        expression "bias(cv)" and the table "bias", is added to it in a force group of its own.
    variables: list of one BiasVariable
        the collective variable; its ``force`` must be a CoordinationForce whose energy is the CV
        (the default expression "cv"), not itself part of the System
    temperature: temperature
        the simulation temperature
    biasFactor: float
        the bias factor gamma (> 1): the CV is sampled as at temperature*biasFactor
    height: energy
        the initial height of the Gaussians
    frequency: int
        the interval in steps at which Gaussians are added
    saveFrequency: int (optional)
        the interval in steps at which the bias is written to biasDir and the biases of other
        processes are read from it (a multiple of frequency); the files are those of
        openmm.app.metadynamics (bias_<id>_<index>.npy), so walkers of both can share a directory
    biasDir: str (optional)
        the directory for saveFrequency
    """

    def __init__(self, system, variables, temperature, biasFactor, height, frequency, saveFrequency=None, biasDir=None):
        from openmmcoordination import CoordinationForce
        if not unit.is_quantity(temperature):
            temperature = temperature*unit.kelvin
        if not unit.is_quantity(height):
            height = height*unit.kilojoules_per_mole
        if len(variables) != 1:
            raise ValueError('Metadynamics: exactly one BiasVariable is supported, got %d' % len(variables))
        variable = variables[0]
        if not isinstance(variable.force, CoordinationForce):
            raise ValueError('Metadynamics: the BiasVariable\'s force must be a CoordinationForce, got %s'
                             % type(variable.force).__name__)
        if variable.periodic:
            raise ValueError('Metadynamics: a coordination number is not periodic')
        if variable.force.getEnergyExpression().strip() != 'cv' or variable.force.getNumTabulatedFunctions() > 0:
            raise ValueError('Metadynamics: the CoordinationForce must have the default energy expression "cv" '
                             'and no tabulated function, got "%s"' % variable.force.getEnergyExpression())
        if biasFactor <= 1.0:
            raise ValueError('Metadynamics: biasFactor must be > 1, got %g' % biasFactor)
        if (saveFrequency is None) != (biasDir is None):
            raise ValueError('Metadynamics: give both saveFrequency and biasDir, or neither')
        if saveFrequency is not None and (saveFrequency < frequency or saveFrequency % frequency != 0):
            raise ValueError('Metadynamics: saveFrequency must be a multiple of frequency')
        if variable.gridWidth < 2:
            raise ValueError('Metadynamics: gridWidth must be at least 2')
        self.variables = variables
        self.temperature = temperature
        self.biasFactor = biasFactor
        self.height = height
        self.frequency = int(frequency)
        self.saveFrequency = saveFrequency
        self.biasDir = biasDir
        self._deltaT = temperature*(biasFactor - 1)
        self._kTDelta = (unit.MOLAR_GAS_CONSTANT_R*self._deltaT).value_in_unit(unit.kilojoules_per_mole)
        self._grid = np.linspace(variable.minValue, variable.maxValue, variable.gridWidth)
        self._selfBias = np.zeros(variable.gridWidth)
        self._totalBias = np.zeros(variable.gridWidth)
        self._hillCenters = []
        self._hillHeights = []
        self._id = np.random.randint(0x7FFFFFFF)
        self._saveIndex = 0
        self._loadedBiases = {}
        self._syncWithDisk()

        force = copy.deepcopy(variable.force)
        force.setEnergyExpression('bias(cv)')
        force.addTabulatedFunction('bias', openmm.Continuous1DFunction(self._totalBias, variable.minValue,
                                                                         variable.maxValue))
        freeGroups = set(range(32)) - set(f.getForceGroup() for f in system.getForces())
        if not freeGroups:
            raise RuntimeError('Metadynamics: all 32 force groups are in use; none is left for the bias')
        force.setForceGroup(max(freeGroups))
        system.addForce(force)
        self._force = force

    @property
    def force(self):
        """The CoordinationForce in the System that applies the bias."""
        return self._force

    def step(self, simulation, steps):
        """Advance the simulation by ``steps`` time steps, adding Gaussians every ``frequency`` steps."""
        remaining = int(steps)
        while remaining > 0:
            untilHill = self.frequency - simulation.currentStep % self.frequency
            chunk = min(remaining, untilHill)
            simulation.step(chunk)
            remaining -= chunk
            if simulation.currentStep % self.frequency == 0:
                self._addHill(simulation.context)
            if self.saveFrequency is not None and simulation.currentStep % self.saveFrequency == 0:
                self._syncWithDisk()
                self._uploadBias(simulation.context)

    def getFreeEnergy(self):
        """The free energy (kJ/mol) on getCollectiveVariableGrid(): -(T + dT)/dT times the bias."""
        return -((self.temperature + self._deltaT)/self._deltaT)*self._totalBias*unit.kilojoules_per_mole

    def getCollectiveVariables(self, simulation):
        """The current value of the collective variable, as a tuple of one value."""
        return (self._force.getCollectiveVariableValue(simulation.context),)

    def getCollectiveVariableGrid(self):
        """The CV values of the bias grid points (getFreeEnergy() is given there)."""
        return self._grid.copy()

    def getBias(self):
        """The current bias (kJ/mol) on the grid, including biases loaded from other processes."""
        return self._totalBias*unit.kilojoules_per_mole

    def getHillHeights(self):
        """The heights (kJ/mol) of the Gaussians this object has added, in order."""
        return np.array(self._hillHeights)*unit.kilojoules_per_mole

    def getHillCenters(self):
        """The CV values at which this object has added Gaussians, in order."""
        return np.array(self._hillCenters)

    def _addHill(self, context):
        variable = self.variables[0]
        cv = self._force.getCollectiveVariableValue(context)
        state = context.getState(getEnergy=True, groups={self._force.getForceGroup()})
        bias = state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole)
        height = self.height.value_in_unit(unit.kilojoules_per_mole)*np.exp(-bias/self._kTDelta)
        x = (self._grid - cv)/variable.biasWidth
        gaussian = height*np.exp(-0.5*x*x)
        self._selfBias += gaussian
        self._totalBias += gaussian
        self._hillCenters.append(cv)
        self._hillHeights.append(height)
        self._uploadBias(context)

    def _uploadBias(self, context):
        variable = self.variables[0]
        self._force.getTabulatedFunction(0).setFunctionParameters(self._totalBias, variable.minValue, variable.maxValue)
        self._force.updateParametersInContext(context)

    def _syncWithDisk(self):
        """Write this process's bias to biasDir and add those of the other processes found there."""
        if self.biasDir is None:
            return
        previous = os.path.join(self.biasDir, 'bias_%d_%d.npy' % (self._id, self._saveIndex))
        self._saveIndex += 1
        temporary = os.path.join(self.biasDir, 'temp_%d_%d.npy' % (self._id, self._saveIndex))
        np.save(temporary, self._selfBias)
        os.replace(temporary, os.path.join(self.biasDir, 'bias_%d_%d.npy' % (self._id, self._saveIndex)))
        if os.path.exists(previous):
            os.remove(previous)
        pattern = re.compile(r'bias_(\d+)_(\d+)\.npy$')
        changed = False
        for name in os.listdir(self.biasDir):
            match = pattern.match(name)
            if match is None:
                continue
            other, index = int(match.group(1)), int(match.group(2))
            if other == self._id or (other in self._loadedBiases and self._loadedBiases[other][0] >= index):
                continue
            try:
                data = np.load(os.path.join(self.biasDir, name))
            except (IOError, ValueError):
                continue  # being replaced by its writer: keep the last version read
            if data.shape == self._selfBias.shape:
                self._loadedBiases[other] = (index, data)
                changed = True
        if changed:
            self._totalBias = self._selfBias + sum(bias for index, bias in self._loadedBiases.values())
