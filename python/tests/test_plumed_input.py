"""openmmcoordination.plumed: each supported action's energy and forces on the Reference platform
equal those of the same forces built by hand through the API (1e-12); UNITS; METAD's arguments;
the COLVAR and HILLS files read back with numpy.loadtxt; every error path, each naming the line,
the action and the keyword, with the System left untouched."""

import math
import re

import numpy as np
import pytest

import openmm
from openmm import unit

from openmmcoordination import CoordinationBiasForce, CoordinationForce, plumed

from gr_helpers import import_script
from helpers import energy_and_forces, make_system

BOX = np.diag([2.1, 2.2, 2.3])
N = 60


def positions(seed=7):
    """N particles in BOX, with 1-2, 1-3 and 2-4 close enough to sample every switching function."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 2.1, (N, 3))
    x[1], x[2], x[3] = x[0] + [0.28, 0.05, 0], x[0] + [0, 0.41, 0.1], x[1] + [0.2, 0.2, 0.1]
    return x


def evaluate(system, x=None):
    """(energy, forces) of a System on Reference at the positions."""
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPeriodicBoxVectors(*[openmm.Vec3(*row) for row in BOX])
    context.setPositions(positions() if x is None else x)
    return energy_and_forces(context)


def assert_same(loaded, handmade):
    """Energies and forces equal to 1e-12 (relative; forces relative to the largest component)."""
    (e1, f1), (e2, f2) = loaded, handmade
    assert abs(e2) > 1e-6 and np.abs(f2).max() > 1e-6          # the case does exercise something
    assert e1 == pytest.approx(e2, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(f1, f2, rtol=0, atol=1e-12*np.abs(f2).max())


def load(text, **kwargs):
    """The input loaded into a new System of N particles in BOX: (PlumedInput, its System). The System has no
    periodic force: periodic=True (unless given) takes the nearest image in BOX, as PLUMED given that box."""
    system = make_system(N, BOX)
    return plumed.load(text + '\n', system, **dict(dict(periodic=True), **kwargs)), system


def handmade(*forces):
    system = make_system(N, BOX)
    for force in forces:
        system.addForce(force)
    return system


def cv(groups, periodic=True, **setters):
    """A CoordinationForce of the groups with setters {name: argument(s)}, its energy the CV."""
    force = CoordinationForce(*groups)
    for name, value in setters.items():
        getattr(force, name)(*(value if isinstance(value, tuple) else (value,)))
    force.setUsesPeriodicBoundaryConditions(periodic)
    return force


A, B = list(range(0, 10)), list(range(10, 40, 2))      # PLUMED's 1-10 and 11-40:2

# PLUMED definition of c (BIASVALUE ARG=c makes it the energy) -> the same CV built by hand
CVS = {
    'short syntax': ('GROUPA=1-10 GROUPB=11-40:2 R_0=0.3 NN=8 MM=14 D_0=0.02',
                     lambda: cv((A, B), setR0=0.3, setN=8, setM=14, setD0=0.02)),
    'one group, NOPBC': ('GROUPA=1-20 R_0=0.25 NOPBC', lambda: cv((list(range(20)),), False, setR0=0.25)),
    'PAIR, D_MAX': ('GROUPA=1-10 GROUPB=11-20 PAIR R_0=0.3 D_MAX=0.9',
                    lambda: cv((A, list(range(10, 20)), True), setR0=0.3, setDMax=0.9)),
    'NLIST': ('GROUPA=1-10 GROUPB=11-40:2 R_0=0.3 NLIST NL_CUTOFF=2.1 NL_STRIDE=10', lambda: cv((A, B), setR0=0.3)),
    'RATIONAL': ('GROUPA=1-10 GROUPB=11-40:2 SWITCH={RATIONAL R_0=0.3 NN=5 MM=9}',
                 lambda: cv((A, B), setR0=0.3, setN=5, setM=9, setDMax=math.inf)),
    'RATIONAL NOSTRETCH': ('GROUPA=1-10 GROUPB=11-40:2 SWITCH={RATIONAL R_0=0.3 D_0=0.05 D_MAX=1.0 NOSTRETCH}',
                           lambda: cv((A, B), setR0=0.3, setD0=0.05, setDMax=1.0, setStretch=False)),
    'EXP': ('GROUPA=1-10 GROUPB=11-40:2 SWITCH={EXP R_0=0.1 D_0=0.05 D_MAX=0.8}',
            lambda: cv((A, B), setSwitchingFunction=CoordinationForce.Exp, setR0=0.1, setD0=0.05, setDMax=0.8)),
    'GAUSSIAN': ('GROUPA=1-10 GROUPB=11-40:2 SWITCH={GAUSSIAN R_0=0.2}',
                 lambda: cv((A, B), setSwitchingFunction=CoordinationForce.Gaussian, setR0=0.2)),
    'SMAP': ('GROUPA=1-10 GROUPB=11-40:2 SWITCH={SMAP R_0=0.3 A=4 B=2 D_MAX=1.0}',
             lambda: cv((A, B), setSwitchingFunction=CoordinationForce.Smap, setR0=0.3, setA=4, setB=2, setDMax=1.0)),
    'CUBIC': ('GROUPA=1-10 GROUPB=11-40:2 SWITCH={CUBIC D_0=0.1 D_MAX=0.7}',
              lambda: cv((A, B), setSwitchingFunction=CoordinationForce.Cubic, setD0=0.1, setDMax=0.7)),
    'TANH': ('GROUPA=1-10 GROUPB=11-40:2 SWITCH={TANH R_0=0.2 D_MAX=0.9}',
             lambda: cv((A, B), setSwitchingFunction=CoordinationForce.Tanh, setR0=0.2, setDMax=0.9)),
    'COSINUS': ('GROUPA=1-10 GROUPB=11-40:2 SWITCH={COSINUS R_0=0.6 D_0=0.1}',
                lambda: cv((A, B), setSwitchingFunction=CoordinationForce.Cosinus, setR0=0.6, setD0=0.1)),
    'CUSTOM': ('GROUPA=1-10 GROUPB=11-40:2 SWITCH={CUSTOM FUNC=exp(-x^2) R_0=0.3 D_MAX=1.2}',
               lambda: cv((A, B), setSwitchingFunction=CoordinationForce.Custom, setCustomExpression='exp(-x^2)',
                          setR0=0.3, setDMax=1.2)),
    'Q': ('GROUPA=1-10 GROUPB=11-40:2 SWITCH={Q R_0=0.1 BETA=40 LAMBDA=1.5 REF=0.3}',
          lambda: cv((A, B), setSwitchingFunction=CoordinationForce.Q, setR0=0.3, setBeta=40.0, setLambda=1.5)),
}


@pytest.mark.parametrize('name', sorted(CVS))
def test_coordination_matches_the_api(name):
    definition, build = CVS[name]
    inp, system = load('c: COORDINATION %s\nBIASVALUE ARG=c' % definition)
    assert isinstance(inp['c'], CoordinationForce)
    assert_same(evaluate(system), evaluate(handmade(build())))


def test_contact_map_matches_the_api():
    """CONTACTMAP SUM with per-contact R_0 and WEIGHT, and with one SWITCH of the Q type."""
    text = ('cm: CONTACTMAP ATOMS1=1,2 SWITCH1={RATIONAL R_0=0.3 D_MAX=1.0} WEIGHT1=0.5 '
            'ATOMS2=1,3 SWITCH2={RATIONAL R_0=0.35 D_MAX=1.0} ATOMS3=2,4 SWITCH3={RATIONAL R_0=0.25 D_MAX=1.0} '
            'WEIGHT3=2 SUM\nq: CONTACTMAP ATOMS1=5,6 ATOMS2=7,8 SWITCH={Q R_0=1 REF=0.4 BETA=50 LAMBDA=1.8} SUM\n'
            'BIASVALUE ARG=cm,q')
    inp, system = load(text)
    cm = CoordinationForce()
    cm.setPairs([0, 0, 1], [1, 2, 3], [0.5, 1.0, 2.0], [0.3, 0.35, 0.25])
    cm.setDMax(1.0)
    cm.setUsesPeriodicBoundaryConditions(True)
    q = cv((), setSwitchingFunction=CoordinationForce.Q, setR0=0.4, setPairs=([4, 6], [5, 7]))
    bias = CoordinationBiasForce('cm + q')
    bias.addCollectiveVariable('cm', cm)
    bias.addCollectiveVariable('q', q)
    assert_same(evaluate(system), evaluate(handmade(bias)))


def test_group_from_an_index_file(tmp_path):
    (tmp_path/'index.ndx').write_text('[ System ]\n1 2 3\n[ ions ]\n1 2 3 4\n5\n[ water ]\n11 13 15 17\n19 21\n')
    (tmp_path/'plumed.dat').write_text('ions: GROUP NDX_FILE=index.ndx NDX_GROUP=ions\nw: GROUP NDX_FILE=index.ndx '
                                       'NDX_GROUP=water\nc: COORDINATION GROUPA=ions GROUPB=w R_0=0.3\nBIASVALUE ARG=c\n')
    inp = plumed.load(tmp_path/'plumed.dat', make_system(N, BOX), periodic=True)
    assert inp['ions'] == [0, 1, 2, 3, 4] and inp['w'] == [10, 12, 14, 16, 18, 20]
    assert_same(evaluate(inp.system), evaluate(handmade(cv(([0, 1, 2, 3, 4], [10, 12, 14, 16, 18, 20]), setR0=0.3))))


BIASES = {
    'RESTRAINT': ('RESTRAINT ARG=c1,c2 AT=0.5,1.5 KAPPA=20,5 SLOPE=1,-2',
                  '0.5*k1*(c1-a1)^2 + m1*(c1-a1) + 0.5*k2*(c2-a2)^2 + m2*(c2-a2)',
                  dict(k1=20, a1=0.5, m1=1, k2=5, a2=1.5, m2=-2)),
    'UPPER_WALLS': ('UPPER_WALLS ARG=c1,c2 AT=0.1,0.2 KAPPA=30,40 EXP=2,4 EPS=1,0.5 OFFSET=0,0.1',
                    'k1*max(0, c1-a1)^2 + k2*(max(0, c2-a2+o2)/e2)^4', dict(k1=30, a1=0.1, k2=40, a2=0.2, o2=0.1, e2=0.5)),
    'LOWER_WALLS': ('LOWER_WALLS ARG=c1,c2 AT=3,4 KAPPA=30,40 EXP=2,3 OFFSET=0.5,0',
                    'k1*min(0, c1-a1-o1)^2 + k2*min(0, c2-a2)^3', dict(k1=30, a1=3, o1=0.5, k2=40, a2=4)),
    'CUSTOM + RESTRAINT': ('e: CUSTOM ARG=c1,c2 VAR=a,b FUNC=a*b+sqrt(b) PERIODIC=NO\nRESTRAINT ARG=e AT=1 KAPPA=8',
                           '0.5*k*(c1*c2+sqrt(c2)-1)^2', dict(k=8)),
    'MATHEVAL + BIASVALUE': ('e: MATHEVAL ARG=c1,c2 FUNC=x^2-0.5*y PERIODIC=NO\nBIASVALUE ARG=e', 'c1^2-0.5*c2', {}),
    'COMBINE + UPPER_WALLS': ('s: COMBINE ARG=c1,c2 COEFFICIENTS=1,2 PARAMETERS=0,0.5 POWERS=1,2 PERIODIC=NO\n'
                              'UPPER_WALLS ARG=s AT=0.3 KAPPA=100', 'k*max(0, c1 + 2*(c2-0.5)^2 - w)^2', dict(k=100, w=0.3)),
    'COMBINE NORMALIZE + LOWER_WALLS': ('s: COMBINE ARG=c1,c2 COEFFICIENTS=1,3 NORMALIZE PERIODIC=NO\n'
                                        'LOWER_WALLS ARG=s AT=5 KAPPA=10', 'k*min(0, 0.25*c1 + 0.75*c2 - w)^2',
                                        dict(k=10, w=5)),
}
TWO_CVS = 'c1: COORDINATION GROUPA=1-10 GROUPB=11-40:2 R_0=0.3\nc2: COORDINATION GROUPA=1-5 R_0=0.45\n'


def two_cvs():
    return dict(c1=cv((A, B), setR0=0.3), c2=cv((list(range(5)),), setR0=0.45))


@pytest.mark.parametrize('name', sorted(BIASES))
def test_bias_matches_the_api(name):
    """The biases summed into one CoordinationBiasForce, against one built by hand with global parameters."""
    definition, expression, parameters = BIASES[name]
    inp, system = load(TWO_CVS + definition)
    assert inp.forces == [inp.biasForce] and inp.biasForce.getNumCollectiveVariables() == 2
    bias = import_script('benchmarks', 'bench_md').bias_restraint(expression, two_cvs(), parameters)
    assert_same(evaluate(system), evaluate(handmade(bias)))


def test_distance_walls_match_the_api():
    """DISTANCE with walls: terms of one CoordinationBiasForce, each DISTANCE a distance CV of it (periodic; with
    NOPBC not), against CustomBondForces built by hand (BOX is rectangular: OpenMM's image is the nearest)."""
    inp, system = load('d: DISTANCE ATOMS=1,3\ne: DISTANCE ATOMS=2,4 NOPBC\n'
                       'UPPER_WALLS ARG=d AT=0.2 KAPPA=500\nRESTRAINT ARG=e AT=0.1 KAPPA=300 SLOPE=7')
    bonds = []
    for (i, j), energy, periodic in [((0, 2), '500*max(0, r-0.2)^2', True), ((1, 3), '150*(r-0.1)^2 + 7*(r-0.1)', False)]:
        bond = openmm.CustomBondForce(energy)
        bond.addBond(i, j, [])
        bond.setUsesPeriodicBoundaryConditions(periodic)
        bonds.append(bond)
    assert inp['d'] == (0, 2) and inp.forces == [inp.biasForce] and inp.biasForce.getNumDistances() == 2
    assert [inp.biasForce.getDistanceParameters(k) for k in range(2)] == [[0, 2, -1, True], [1, 3, -1, False]]
    assert_same(evaluate(system), evaluate(handmade(*bonds)))


def test_units_angstrom_and_kcal():
    """UNITS LENGTH=A ENERGY=kcal/mol: R_0, D_MAX, AT of a distance in A; KAPPA in kcal/mol (per A^2
    on a distance); the same System as in nm and kJ/mol."""
    inp, system = load('UNITS LENGTH=A ENERGY=kcal/mol\nc: COORDINATION GROUPA=1-10 GROUPB=11-40:2 '
                       'SWITCH={Q REF=3.0 BETA=4 D_0=0.5} NOPBC\nc2: COORDINATION GROUPA=1-10 R_0=3 D_MAX=9 NOPBC\n'
                       'd: DISTANCE ATOMS=1,3\nRESTRAINT ARG=c,c2 AT=1,2 KAPPA=2,3\nUPPER_WALLS ARG=d AT=2 KAPPA=1.5 EPS=0.5\n'
                       'METAD ARG=c SIGMA=0.1 HEIGHT=0.5 PACE=10 BIASFACTOR=5 TEMP=300 GRID_MIN=0 GRID_MAX=3 GRID_BIN=30')
    inp2, system2 = load('c: COORDINATION GROUPA=1-10 GROUPB=11-40:2 SWITCH={Q REF=0.3 BETA=40 D_0=0.05} NOPBC\n'
                         'c2: COORDINATION GROUPA=1-10 R_0=0.3 D_MAX=0.9 NOPBC\nd: DISTANCE ATOMS=1,3\n'
                         'RESTRAINT ARG=c,c2 AT=1,2 KAPPA=8.368,12.552\nUPPER_WALLS ARG=d AT=0.2 KAPPA=6.276 EPS=0.05\n'
                         'METAD ARG=c SIGMA=0.1 HEIGHT=2.092 PACE=10 BIASFACTOR=5 TEMP=300 GRID_MIN=0 GRID_MAX=3 GRID_BIN=30')
    assert inp.metadynamics.height.value_in_unit(unit.kilojoules_per_mole) == pytest.approx(2.092, rel=1e-15)
    assert_same(evaluate(system), evaluate(system2))


def test_units_angstrom_default_beta_of_q():
    """Q's default BETA is 50 per length unit of the input, as PLUMED reads it (50/A = 500/nm under
    UNITS LENGTH=A; the reader once took 50/nm); the value against NumPy."""
    inp, system = load('UNITS LENGTH=A\nc: COORDINATION GROUPA=1-10 GROUPB=11-40:2 SWITCH={Q R_0=1 REF=3.0} NOPBC\n'
                       'BIASVALUE ARG=c')
    assert inp['c'].getBeta().value_in_unit(unit.nanometer**-1) == 500
    x = positions()
    r = np.linalg.norm(x[np.arange(10)][:, None] - x[np.arange(10, 40, 2)][None], axis=-1)
    expected = np.sum(1/(1 + np.exp(np.minimum(500*(r - 1.8*0.3), 700))))     # nm: BETA 500/nm, REF 0.3 nm
    assert expected > 0.5
    assert evaluate(system)[0] == pytest.approx(expected, rel=1e-12)


def test_nlist_is_logged():
    inp, _ = load('c: COORDINATION GROUPA=1-10 GROUPB=11-40:2 R_0=0.3 NLIST NL_CUTOFF=2.1 NL_STRIDE=10')
    assert inp.actions[0].log == ["NLIST (NL_CUTOFF=2.1, NL_STRIDE=10) replaced by the force's own cutoff, dmax = "
                                  "2.04388 nm: the pairs within it are found every step (on CUDA by lists rebuilt when "
                                  "a particle has moved)"]
    assert 'note: NLIST' in inp.describe()


def test_nlist_within_the_zero_of_cosinus():
    """An NL_CUTOFF that reaches where the switching function is 0 (D_MAX, or d0 + r0 of COSINUS) leaves
    PLUMED's sum whole: accepted, the same force as without NLIST (a shorter one: test_plumed_errors)."""
    text = 'c: COORDINATION GROUPA=1-10 GROUPB=11-40:2 SWITCH={COSINUS R_0=0.3 D_0=0.1}'
    inp, system = load(text + ' NLIST NL_CUTOFF=0.4 NL_STRIDE=10\nBIASVALUE ARG=c')
    assert_same(evaluate(system), evaluate(load(text + '\nBIASVALUE ARG=c')[1]))


METAD = ('c1: COORDINATION GROUPA=1 GROUPB=2-4 R_0=0.3\nc2: COORDINATION GROUPA=1 GROUPB=11-40:2 R_0=0.35 NN=12\n'
         'metad: METAD ARG=c1,c2 SIGMA=0.05,0.2 HEIGHT=1.5 PACE=20 BIASFACTOR=8 TEMP=300 GRID_MIN=0,0 GRID_MAX=3,5 '
         'GRID_BIN=60,%s FILE=%s\nPRINT ARG=c1,c2,metad.bias STRIDE=20 FILE=%s')


def test_metad_arguments():
    """METAD becomes Metadynamics with PLUMED's numbers: GRID_BIN + 1 points, GRID_SPACING rounded
    up as PLUMED does (the larger of the two), TEMP checked against the integrator."""
    integrator = openmm.LangevinMiddleIntegrator(300, 1, 0.002)
    inp, system = load(METAD % ('40 GRID_SPACING=0.06,0.09', 'HILLS', 'COLVAR'), integrator=integrator)
    meta = inp['metad']
    assert meta is inp.metadynamics and inp.forces == [meta.force] and system.getNumForces() == 1
    assert int(system.getForce(0).this) == int(meta.force.this)
    assert [(v.minValue, v.maxValue, v.biasWidth, v.gridWidth) for v in meta.variables] == [(0, 3, 0.05, 61),
                                                                                             (0, 5, 0.2, 57)]
    assert (meta.biasFactor, meta.frequency, meta.temperature, meta.height) == (
        8, 20, 300*unit.kelvin, 1.5*unit.kilojoules_per_mole)
    assert meta.variables[0].force is inp['c1'] and inp['c1'].getR0() == 0.3*unit.nanometer
    inp, _ = load(METAD.replace('TEMP=300 ', '').replace('GRID_BIN=60,%s ', '') % ('HILLS', 'COLVAR'),
                  integrator=integrator)
    assert [v.gridWidth for v in inp.metadynamics.variables] == [301, 126]      # 0.2*SIGMA: ceil(3/0.01), ceil(5/0.04)
    assert inp.metadynamics.temperature == 300*unit.kelvin                      # the integrator's


def test_metad_grid_from_sigma_as_plumed_rounds_it():
    """Without GRID_BIN or GRID_SPACING, PLUMED's spacing is 0.2*SIGMA and its bins ceil((max - min)/spacing):
    SIGMA=0.05 from 1 to 2.2 is 1.2000000000000002/0.010000000000000002 = 119.99999999999999, 120 bins (121
    points); SIGMA/5 = 0.01 would give 120.00000000000001, 121 bins, a different grid (the reader's, once)."""
    inp, _ = load('c: COORDINATION GROUPA=1 GROUPB=2-4 R_0=0.3\nMETAD ARG=c SIGMA=0.05 HEIGHT=1 PACE=20 BIASFACTOR=8 '
                  'TEMP=300 GRID_MIN=1 GRID_MAX=2.2')
    assert math.ceil((2.2 - 1)/(0.2*0.05)) == 120
    assert [v.gridWidth for v in inp.metadynamics.variables] == [121]


def test_colvar_and_hills_files(tmp_path):
    """A short metadynamics run on Reference: COLVAR and HILLS read back with numpy.loadtxt. The COLVAR
    columns at the hill times equal the hill centres, the hills summed in NumPy (the heights are
    PLUMED's, scaled by biasf/(biasf - 1)) equal -getFreeEnergy(), and metad.bias is the bias energy."""
    system = make_system(N, BOX)
    integrator = openmm.LangevinMiddleIntegrator(300, 5, 0.002)
    integrator.setRandomNumberSeed(3)
    inp = plumed.load(METAD % ('50', 'out.hills', 'out.colvar') + '\n', system, integrator=integrator)
    simulation = _simulation(system, integrator)
    inp.attach(simulation, str(tmp_path))
    inp.step(simulation, 200)
    inp.close()
    colvar = (tmp_path/'out.colvar').read_text().splitlines()
    assert colvar[0] == '#! FIELDS time c1 c2 metad.bias'
    assert all(re.match(r'( -?\d+\.\d{6}){4}$', line) for line in colvar[1:])
    values = np.loadtxt(str(tmp_path/'out.colvar'))
    np.testing.assert_allclose(values[:, 0], np.arange(0, 201, 20)*0.002, atol=5e-7)
    hills = (tmp_path/'out.hills').read_text().splitlines()
    assert hills[:3] == ['#! FIELDS time c1 c2 sigma_c1 sigma_c2 height biasf', '#! SET multivariate false',
                         '#! SET kerneltype stretched-gaussian']
    data = np.loadtxt(str(tmp_path/'out.hills'))
    assert data.shape == (10, 7)
    meta = inp.metadynamics
    np.testing.assert_allclose(data[:, 0], np.arange(20, 201, 20)*0.002, rtol=1e-15)
    np.testing.assert_allclose(data[:, 1:3], meta.getHillCenters(), rtol=1e-15)
    np.testing.assert_allclose(values[1:, 1:3], data[:, 1:3], atol=5e-7)     # COLVAR at the hill steps: %f
    assert np.all(data[:, 3:5] == [0.05, 0.2]) and np.all(data[:, 6] == 8)
    heights = meta.getHillHeights().value_in_unit(unit.kilojoules_per_mole)
    np.testing.assert_allclose(data[:, 5], heights*8/7, rtol=1e-15)
    assert data[0, 5] == pytest.approx(1.5*8/7, rel=1e-15) and data[-1, 5] < data[0, 5]
    # PLUMED's hills (src/bias/MetaD.cpp): cut where d2 = sum (s - s0)^2/(2 sigma^2) reaches 6.25, stretched to 0
    # there; the well-tempered height from the exact sum of the earlier hills at the new centre
    def hill(d2):
        return np.where(d2 < 6.25, (np.exp(-np.minimum(d2, 6.25)) - np.exp(-6.25))/(1 - np.exp(-6.25)), 0.0)
    kTDelta = (unit.MOLAR_GAS_CONSTANT_R*300*unit.kelvin*7).value_in_unit(unit.kilojoules_per_mole)
    expected = []
    for a, b in data[:, 1:3]:
        previous = sum(h*hill(0.5*((a - a0)/0.05)**2 + 0.5*((b - b0)/0.2)**2)
                       for (a0, b0), h in zip(data[:len(expected), 1:3], expected))
        expected.append(1.5*np.exp(-previous/kTDelta))
    np.testing.assert_allclose(heights, expected, rtol=1e-13)
    grid = meta.getCollectiveVariableGrid()
    x, y = np.meshgrid(*grid)
    summed = sum(h*hill(0.5*((x - a)/sa)**2 + 0.5*((y - b)/sb)**2) for (_, a, b, sa, sb, _, _), h in zip(data, heights))
    np.testing.assert_allclose(-summed*8/7, meta.getFreeEnergy().value_in_unit(unit.kilojoules_per_mole),
                               rtol=0, atol=1e-12*summed.max())
    state = simulation.context.getState(getEnergy=True, groups={meta.force.getForceGroup()})
    # PLUMED prints the bias of the step before that step's hill, as this reporter does (it runs inside the
    # step, before Metadynamics adds the hill); after it, getValues reads the bias force's energy
    assert inp.getValues(simulation.context, ['metad.bias'])[0] == state.getPotentialEnergy().value_in_unit(
        unit.kilojoules_per_mole)
    assert values[0, 3] == 0 and values[-1, 3] > 0.1


def _simulation(system, integrator):
    """A Reference Simulation of the N particles of ``system`` at positions(), velocities at 300 K (seed 3)."""
    from openmm import app
    topology = app.Topology()
    chain = topology.addChain()
    for _ in range(N):
        topology.addAtom('X', None, topology.addResidue('X', chain))
    simulation = app.Simulation(topology, system, integrator, openmm.Platform.getPlatformByName('Reference'))
    simulation.context.setPositions(positions())
    simulation.context.setVelocitiesToTemperature(300, 3)
    return simulation


def test_existing_files_are_backed_up_as_plumed_does(tmp_path, monkeypatch):
    """PLUMED's OFile::open without RESTART renames an existing file bck.N.FILE (N the first free number
    from 0) before writing it anew: COLVAR and HILLS here; bck.0.COLVAR existed, so the old COLVAR is
    bck.1.COLVAR, unchanged. PLUMED_MAXBACKUP=0 (PLUMED's variable) overwrites instead. Two actions writing
    one file are refused at attach(), naming the second's line, action and FILE."""
    (tmp_path/'COLVAR').write_text('the user\'s COLVAR\n')
    (tmp_path/'bck.0.COLVAR').write_text('an older one\n')
    (tmp_path/'HILLS').write_text('old hills\n')
    text = ('c: COORDINATION GROUPA=1 GROUPB=2-4 R_0=0.3\nMETAD ARG=c SIGMA=0.05 HEIGHT=1 PACE=20 BIASFACTOR=8 TEMP=300 '
            'GRID_MIN=0 GRID_MAX=3 GRID_BIN=60\nPRINT ARG=c STRIDE=10 FILE=COLVAR\n')
    system = make_system(N, BOX)
    integrator = openmm.LangevinMiddleIntegrator(300, 5, 0.002)
    inp = plumed.load(text, system, integrator=integrator)
    simulation = _simulation(system, integrator)
    inp.attach(simulation, str(tmp_path))
    inp.step(simulation, 20)
    inp.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ['COLVAR', 'HILLS', 'bck.0.COLVAR', 'bck.0.HILLS', 'bck.1.COLVAR']
    assert (tmp_path/'bck.1.COLVAR').read_text() == 'the user\'s COLVAR\n'
    assert (tmp_path/'bck.0.COLVAR').read_text() == 'an older one\n'
    assert (tmp_path/'bck.0.HILLS').read_text() == 'old hills\n'
    assert (tmp_path/'COLVAR').read_text().startswith('#! FIELDS time c\n')
    assert 'backed up as' in inp.describe()

    monkeypatch.setenv('PLUMED_MAXBACKUP', '0')
    system = make_system(N, BOX)
    integrator = openmm.LangevinMiddleIntegrator(300, 5, 0.002)
    inp = plumed.load(text, system, integrator=integrator)
    inp.attach(_simulation(system, integrator), str(tmp_path))
    inp.close()
    assert len(list(tmp_path.iterdir())) == 5 and (tmp_path/'COLVAR').read_text().count('#! FIELDS') == 1
    monkeypatch.delenv('PLUMED_MAXBACKUP')

    system = make_system(N, BOX)
    inp = plumed.load('c: COORDINATION GROUPA=1 GROUPB=2-4 R_0=0.3\nPRINT ARG=c FILE=out\nPRINT ARG=c STRIDE=2 FILE=./out\n',
                      system)
    with pytest.raises(plumed.PlumedInputError, match=r'input line 3: PRINT: FILE: ./out is also written by line 2 '
                                                      r'\(PRINT\)'):
        inp.attach(_simulation(system, openmm.VerletIntegrator(0.002)), str(tmp_path))
    assert not (tmp_path/'out').exists()


def test_metad_rct_printed_after_the_hill(tmp_path):
    """CALC_RCT: PLUMED sets .rct in METAD's update, after the hill of that step (computeReweightingFactor),
    and .rbias = .bias - c(t) in its calculation, before it; PRINT, in the update phase after METAD, writes
    both so. c(t) from the HILLS file in NumPy, PLUMED's formula on its grid (61 points, the hills
    truncated and stretched): kT ln(sum exp(gamma/(gamma-1) V/kT) / sum exp(V/((gamma-1) kT)))."""
    text = ('c: COORDINATION GROUPA=1 GROUPB=2-4 R_0=0.3\nmetad: METAD ARG=c SIGMA=0.05 HEIGHT=1.5 PACE=20 BIASFACTOR=8 '
            'TEMP=300 GRID_MIN=0 GRID_MAX=3 GRID_BIN=60 CALC_RCT\n'
            'PRINT ARG=c,metad.bias,metad.rct,metad.rbias STRIDE=10 FILE=COLVAR FMT=%.15g\n')
    system = make_system(N, BOX)
    integrator = openmm.LangevinMiddleIntegrator(300, 5, 0.002)
    integrator.setRandomNumberSeed(3)
    inp = plumed.load(text, system, integrator=integrator)
    simulation = _simulation(system, integrator)
    inp.attach(simulation, str(tmp_path))
    inp.step(simulation, 100)
    inp.close()
    colvar = np.loadtxt(str(tmp_path/'COLVAR'))
    hills = np.loadtxt(str(tmp_path/'HILLS'))
    assert colvar.shape == (11, 5) and hills.shape == (5, 5)
    kT = (unit.MOLAR_GAS_CONSTANT_R*300*unit.kelvin).value_in_unit(unit.kilojoules_per_mole)
    grid = np.linspace(0, 3, 61)
    def rct(count):
        d2 = 0.5*((grid[:, None] - hills[:count, 1])/0.05)**2
        kernel = np.where(d2 < 6.25, (np.exp(-np.minimum(d2, 6.25)) - np.exp(-6.25))/(1 - np.exp(-6.25)), 0.0)
        bias = kernel @ (hills[:count, 3]*7/8)
        return kT*np.log(np.sum(np.exp(8/7*bias/kT))/np.sum(np.exp(bias/7/kT)))
    steps = np.arange(0, 101, 10)
    after = np.array([rct(step//20) for step in steps])            # the hills of steps <= this one
    before = np.array([rct((step - 1)//20) if step else 0.0 for step in steps])
    assert np.all(np.diff(after[::2]) > 0)                          # c(t) changes at every hill
    np.testing.assert_allclose(colvar[:, 3], after, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(colvar[:, 4], colvar[:, 2] - before, rtol=1e-10, atol=1e-12)


def test_values_of_a_cv_nothing_uses():
    """A COORDINATION that nothing prints, biases or dumps is in no force of the System: getValues() names it
    (it was a KeyError), and still gives the values that are computed."""
    inp, _ = load('c: COORDINATION GROUPA=1 GROUPB=2-4 R_0=0.3\nd: COORDINATION GROUPA=5 GROUPB=6-8 R_0=0.3\n'
                  'RESTRAINT ARG=d AT=1 KAPPA=10\n')
    context = openmm.Context(inp.system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPositions(positions())
    with pytest.raises(ValueError, match=r"^PlumedInput.getValues: 'c' is computed by no force of the System: nothing "
                                         r"in the input prints, biases or dumps it$"):
        inp.getValues(context, ['c'])
    assert inp.getValues(context, ['d'])[0] > 0


def test_values_of_vector_components_and_unknown_names():
    """getValues() takes a COORDINATIONNUMBER's component as PRINT does, label.sum for PLUMED 2.10's
    label_sum (it was an AttributeError), with the same number; a name of no value is a ValueError
    that names it and the input's labels (it was a KeyError)."""
    inp, _ = load('n: COORDINATIONNUMBER SPECIES=1-6 R_0=0.3 SUM MEAN\nPRINT ARG=n.sum,n.mean FILE=colvar_n\n')
    context = openmm.Context(inp.system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPositions(positions())
    total, dotted, mean = inp.getValues(context, ['n_sum', 'n.sum', 'n.mean'])
    assert dotted == total and total > 0
    assert mean == pytest.approx(total / 6, rel=1e-12)
    with pytest.raises(ValueError, match=r"^PlumedInput.getValues: 'x' is no value of the input \(its labels: n, n\.1, .*n_sum\)$"):
        inp.getValues(context, ['x'])
