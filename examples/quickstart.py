"""Ten lines: Na+ in water, the Na-O g(r) from a short run, r0 at its first minimum, the CV."""
import openmm, openmm.app as app, openmm.unit as unit
from openmmcoordination import CoordinationForce, PairDistributionAccumulator

ff = app.ForceField('amber14-all.xml', 'amber14/tip3p.xml')
top = app.Topology(); top.addAtom('NA', app.element.sodium, top.addResidue('NA', top.addChain()))
model = app.Modeller(top, [openmm.Vec3(0, 0, 0)]*unit.nanometer); model.addSolvent(ff, boxSize=openmm.Vec3(2, 2, 2)*unit.nanometer, neutralize=False)
system = ff.createSystem(model.topology, nonbondedMethod=app.PME, nonbondedCutoff=0.9, constraints=app.HBonds)
oxygens = [a.index for a in model.topology.atoms() if a.name == 'O']
cv = CoordinationForce([0], oxygens); cv.setUsesPeriodicBoundaryConditions(True); cv.setEnergyFunction('0'); system.addForce(cv)
sim = app.Simulation(model.topology, system, openmm.LangevinMiddleIntegrator(300, 1, 0.002)); sim.context.setPositions(model.positions); sim.minimizeEnergy()
gr = PairDistributionAccumulator(cv, 100, 1.0)
for frame in range(100): sim.step(20); gr.add(sim.context)   # histograms summed on the device
gr = gr.getResult(sim.context); r0 = gr.getFirstMinimum(); cv.setR0(r0); cv.updateParametersInContext(sim.context)   # r0 a Quantity (nm)
print('first minimum %.3f nm, n(r) there %.2f, CV now %.2f' % (r0.value_in_unit(unit.nanometer), gr.coordinationAt(r0), cv.getCollectiveVariableValue(sim.context)))
