"""openmmcoordination.plumed reads PLUMED's syntax as PLUMED does (issue 40): braces over lines and
comments inside "..." blocks, MATHEVAL and x2 in switching functions, Lepton's constants, GROUP's
REMOVE/SORT/UNIQUE, UNITS' names; the actions that only steer PLUMED's run are accepted and logged once;
ARG=*, (regex) and SORT; METAD's CALC_RCT; the reader is the subpackage openmmcoordination/plumed/."""

import importlib
import math

import numpy as np
import openmm
import pytest

from openmmcoordination import CoordinationForce, plumed
from openmmcoordination.plumed.syntax import Units, parseInput


def system(n=4):
    s = openmm.System()
    for _ in range(n):
        s.addParticle(1.0)
    return s


def value(inp, label, positions, box=2.0):
    """The CV ``label`` of a PlumedInput at positions (nm), on Reference."""
    s = inp.system
    force = inp[label]
    s2 = system(s.getNumParticles())
    import copy
    s2.addForce(copy.deepcopy(force))
    s2.setDefaultPeriodicBoxVectors(*np.eye(3)*box)
    context = openmm.Context(s2, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    context.setPositions(positions)
    return context.getState(getEnergy=True).getPotentialEnergy()._value


POSITIONS = np.array([[0, 0, 0], [0.25, 0, 0], [0, 0.33, 0], [0.4, 0.1, 0.2]])


def test_subpackage_modules():
    for name in ('syntax', 'expressions', 'cvs', 'biases', 'outputs', 'command'):
        importlib.import_module('openmmcoordination.plumed.' + name)
    assert plumed.load and plumed.PlumedInputError and plumed.PlumedColvarReporter and plumed.HillsWriter
    assert plumed.PlumedDerivativesReporter


def test_braces_over_lines_inside_blocks():
    text = ('c0: COORDINATION GROUPA=1,2,3,4 R_0=0.3\n'
            'c1: COORDINATION ...  # comment\n  GROUPA={\n1\n  2\n## comment in the middle\n3\n4\n}\n  R_0=0.3\n... c1\n'
            'c2: COORDINATION ...\nGROUPA={ 1 2 3 4\n } R_0=0.3\n...\n')
    actions = parseInput(text)
    assert [a.label for a in actions] == ['c0', 'c1', 'c2']
    assert actions[1].line == 2 and actions[1].keywords['GROUPA'] == '1\n  2\n3\n4'.replace('\n  ', ' ').replace('\n', ' ')
    inp = plumed.load(text, system())
    assert list(inp['c1'].getGroupA()) == list(inp['c2'].getGroupA()) == [0, 1, 2, 3]
    with pytest.raises(plumed.PlumedInputError, match='braces may span lines only inside'):
        plumed.load('c: COORDINATION GROUPA={1\n2} R_0=0.3\n', system())


def test_endplumed_logged():
    inp = plumed.load('c: COORDINATION GROUPA=1-4 R_0=0.3\nENDPLUMED\nthis is not read\n', system())
    assert inp.actions[-1].name == 'ENDPLUMED' and 'lines 3 to 3 are not read' in inp.actions[-1].log[0]


def test_matheval_x2_and_constants_give_the_same_value():
    text = ('a: COORDINATION GROUPA=1-4 SWITCH={RATIONAL R_0=0.3 D_MAX=0.9}\n'
            'b: COORDINATION GROUPA=1-4 SWITCH={MATHEVAL FUNC=1/(1+x2^3) R_0=0.3 D_MAX=0.9}\n'
            'c: COORDINATION GROUPA=1-4 SWITCH={CUSTOM FUNC=1/(1+x^(2*pi/pi*3)) R_0=0.3 D_MAX=0.9}\n'
            'd: COORDINATION GROUPA=1-4 SWITCH={CUSTOM FUNC=1/(1+exp(log(x)*6*log(e))) R_0=0.3 D_MAX=0.9}\n')
    inp = plumed.load(text, system())
    a = value(inp, 'a', POSITIONS)
    for label in 'bcd':
        assert value(inp, label, POSITIONS) == pytest.approx(a, rel=1e-13, abs=1e-15)
    assert inp['b'].getCustomExpression() == '1/(1+(x*x)^3)'
    logs = [line for action in inp.actions for line in action.log]
    assert sum('MATHEVAL' in line for line in logs) == 1 and sum('x2' in line for line in logs) == 1
    assert any('pi' in line for line in logs) and any(': e,' in line or ': e ' in line or line.endswith('e, constants') or ' e,' in line for line in logs)


def test_x2_refused_where_plumed_differs():
    with pytest.raises(plumed.PlumedInputError, match='uses both x and x2'):
        plumed.load('c: COORDINATION GROUPA=1-4 SWITCH={CUSTOM FUNC=x*x2 R_0=0.3}\n', system())
    with pytest.raises(plumed.PlumedInputError, match='at x2 = 0'):
        plumed.load('c: COORDINATION GROUPA=1-4 SWITCH={CUSTOM FUNC=0.5/(1+x2^3) R_0=0.3}\n', system())


def test_numerical_derivatives_logged():
    # periodic=True: no note on periodicity (the System has no periodic force; test_plumed_periodic.py)
    inp = plumed.load('c: COORDINATION GROUPA=1-4 R_0=0.3 NUMERICAL_DERIVATIVES\n', system(), periodic=True)
    assert len(inp.actions[0].log) == 1 and 'analytic' in inp.actions[0].log[0]


def test_group_remove_sort_unique():
    inp = plumed.load('a: GROUP ATOMS=5,4,6,3,4,2\nb: GROUP ATOMS=5,4,6,3,4,2 SORT\nc: GROUP ATOMS=5,4,6,3,4,2 UNIQUE\n'
                      'd: GROUP ATOMS=1-6 REMOVE=a\ne: GROUP ATOMS=1-6,4 REMOVE=4,9\n', system(9))
    assert inp['a'] == [4, 3, 5, 2, 3, 1]
    assert inp['b'] == [1, 2, 3, 3, 4, 5]
    assert inp['c'] == [1, 2, 3, 4, 5]
    assert inp['d'] == [0]
    assert inp['e'] == [0, 1, 2, 4, 5, 3] and 'not in the list' in inp.actions[-1].log[0]


@pytest.mark.parametrize('keywords,length,energy,time', [
    ('ENERGY=eV', 1.0, 96.48530749925792, 1.0), ('ENERGY=j/mol LENGTH=um TIME=ns', 1000.0, 0.001, 1000.0),
    ('ENERGY=kcal/mol LENGTH=A TIME=fs', 0.1, 4.184, 0.001), ('ENERGY=2.5 LENGTH=0.5 TIME=10', 0.5, 2.5, 10.0),
    ('ENERGY=Ha LENGTH=Bohr TIME=atomic', 0.052917721067, 2625.499638, 2.418884326509e-5)])
def test_units(keywords, length, energy, time):
    inp = plumed.load('UNITS %s\n' % keywords, system())
    assert (inp.units.length, inp.units.energy, inp.units.time) == (length, energy, time)


def test_units_scale_a_restraint():
    inp = plumed.load('UNITS ENERGY=eV\nc: COORDINATION GROUPA=1-4 R_0=0.3\nRESTRAINT ARG=c AT=1 KAPPA=2\n', system())
    assert '192.9706149985158' in [v for v in inp.values.values() if v.kind == 'bias'][0].obj


def test_steering_actions_accepted_and_logged_once():
    text = ('MOLINFO STRUCTURE=x.pdb\nDEBUG DETAILED_TIMERS\nWHOLEMOLECULES ENTITY0=1-4\n'
            'c: COORDINATION GROUPA=1-4 R_0=0.3\nFLUSH STRIDE=1\n')
    inp = plumed.load(text, system(), periodic=True)    # the nearest image (without: test_plumed_periodic.py)
    for action in inp.actions:
        if action.name != 'COORDINATION':
            assert len(action.log) == 1 and 'accepted' in action.log[0], action.name
    with pytest.raises(plumed.PlumedInputError, match='NOPBC') as error:
        plumed.load('WHOLEMOLECULES ENTITY0=1-4\nc: COORDINATION GROUPA=1-4 R_0=0.3 NOPBC\n', system(), periodic=True)
    assert error.value.action == 'WHOLEMOLECULES'


def test_print_star_regex_and_sort():
    text = ('c1: COORDINATION GROUPA=1-4 R_0=0.3\nc2: COORDINATION GROUPA=1-3 R_0=0.3\n'
            'av: COMBINE ARG=(c.*) NORMALIZE PERIODIC=NO\ns: SORT ARG=(c.*)\n'
            'diff: COMBINE ARG=s.1,av COEFFICIENTS=1,-1 PERIODIC=NO\nPRINT ARG=* FILE=COLVAR\n')
    inp = plumed.load(text, system())
    printed = [v for v in inp.values.values() if v.kind == 'print'][0]
    assert printed.args == ['c1', 'c2', 'av', 's.1', 's.2', 'diff']
    assert 'min(c1, c2)' in inp.values['s.1'].obj and 'max(c1, c2)' in inp.values['s.2'].obj
    inp = plumed.load(text.replace('PRINT ARG=*', 'PRINT ARG=(c[0-9]),diff'), system())
    assert [v for v in inp.values.values() if v.kind == 'print'][0].args == ['c1', 'c2', 'diff']
    with pytest.raises(plumed.PlumedInputError, match=r"\*: it would include"):
        plumed.load('c: COORDINATION GROUPA=1-4 R_0=0.3\nRESTRAINT ARG=c AT=1 KAPPA=1\nPRINT ARG=*\n', system())


def test_repeated_atoms_counted_as_plumed():
    """GROUPA=1,1,2,3 (PLUMED's rt-fix-229): the places of the list are paired, an atom with itself skipped."""
    inp = plumed.load('c: COORDINATION GROUPA=1,1,2,3 R_0=0.3\nd: COORDINATION GROUPA=1,2,3 R_0=0.3\n'
                      'e: COORDINATION GROUPA=1 GROUPB=2,3 R_0=0.3\n', system())
    assert value(inp, 'c', POSITIONS) == pytest.approx(value(inp, 'd', POSITIONS) + value(inp, 'e', POSITIONS), rel=1e-14)


def test_repeated_atoms_with_pair_pair_the_places():
    """GROUPA=1,1,3 GROUPB=2,2,4 PAIR: PLUMED pairs the i-th place of GROUPA with the i-th of GROUPB, so
    the pair 1-2 counts twice and 3-4 once (this reader once paired every place of GROUPA with every
    place of GROUPB, 9 pairs, when a group with PAIR named an atom twice)."""
    inp = plumed.load('c: COORDINATION GROUPA=1,1,3 GROUPB=2,2,4 PAIR SWITCH={RATIONAL R_0=0.3}\n', system())
    s = lambda i, j: 1/(1 + (np.linalg.norm(POSITIONS[j] - POSITIONS[i])/0.3)**6)   # RATIONAL, MM = 2 NN
    assert value(inp, 'c', POSITIONS) == pytest.approx(2*s(0, 1) + s(2, 3), rel=1e-13)


def test_calc_rct_components():
    text = ('c: COORDINATION GROUPA=1-4 R_0=0.3\n'
            'm: METAD ARG=c SIGMA=0.1 HEIGHT=1 PACE=10 BIASFACTOR=5 TEMP=300 GRID_MIN=0 GRID_MAX=4 GRID_BIN=40 CALC_RCT\n'
            'PRINT ARG=c,m.bias,m.rct,m.rbias FILE=COLVAR\n')
    inp = plumed.load(text, system())
    assert any('CALC_RCT accepted' in line for line in inp.actions[1].log)
    with pytest.raises(plumed.PlumedInputError, match='only with CALC_RCT'):
        plumed.load(text.replace(' CALC_RCT', ''), system())


OPES_CV = 'c: COORDINATION GROUPA=1-3 GROUPB=4-6 R_0=0.5 D_MAX=1.5\n'


@pytest.mark.parametrize('line,keyword,message', [
    ('o: OPES_METAD ARG=c PACE=20 BARRIER=10 SIGMA=ADAPTIVE TEMP=300', 'SIGMA_MIN', 'required with SIGMA=ADAPTIVE'),
    ('o: OPES_METAD ARG=c PACE=20 BARRIER=10 SIGMA=0.2 TEMP=300 FMT=%q', 'FMT', 'not a format for one number'),
    ('o: OPES_METAD ARG=c PACE=20 BARRIER=10 SIGMA=0.2 TEMP=300 STATE_WFILE=S', 'STATE_WFILE', 'state files'),
    ('o: OPES_METAD_EXPLORE ARG=c PACE=20 BARRIER=10 SIGMA=0.2 TEMP=300 NO_ZED', 'NO_ZED', 'Z is always'),
    ('o: OPES_METAD ARG=c PACE=20 BARRIER=10 SIGMA=0.2 TEMP=300 WALKERS_MPI', 'WALKERS_MPI', 'share a directory'),
    ('o: OPES_METAD ARG=c PACE=20 BARRIER=10 SIGMA=0.2 TEMP=300 CALC_WORK', 'CALC_WORK', 'work'),
    ('o: OPES_METAD ARG=c PACE=20 BARRIER=10 SIGMA=0.2 TEMP=300 ADAPTIVE_SIGMA_STRIDE=100', 'ADAPTIVE_SIGMA_STRIDE', 'ADAPTIVE'),
    ('o: OPES_METAD ARG=c BARRIER=10 SIGMA=0.2 TEMP=300', 'PACE', 'required'),
    ('o: OPES_METAD ARG=c PACE=20 BARRIER=10 SIGMA=0.2 TEMP=300 FOO=1', 'FOO', 'not supported'),
])
def test_opes_refused_keyword_by_keyword(line, keyword, message):
    with pytest.raises(plumed.PlumedInputError, match=message) as error:
        plumed.load(OPES_CV + line + '\n', system(6))
    assert error.value.line == 2 and error.value.action == line.split()[1] and error.value.keyword == keyword


def test_opes_mapped_and_printed(tmp_path):
    """OPES_METAD becomes OPES with PLUMED's keywords; PRINT's opes.bias is OPES.getBiasAt at the CVs and
    rct, zed, neff, nker its last history; a second adaptive bias is refused."""
    from openmm import app, unit
    text = OPES_CV + ('o: OPES_METAD ARG=c PACE=20 BARRIER=10 SIGMA=0.2 TEMP=300 BIASFACTOR=8 EPSILON=1e-4 '
                      'KERNEL_CUTOFF=4 COMPRESSION_THRESHOLD=0.5 NLIST\n'
                      'PRINT ARG=c,o.bias,o.rct,o.zed,o.neff,o.nker STRIDE=20 FILE=COLVAR\n')
    s = system(6)
    s.setDefaultPeriodicBoxVectors(*np.eye(3)*2.0)
    integrator = openmm.LangevinIntegrator(300*unit.kelvin, 1/unit.picosecond, 0.002*unit.picoseconds)
    integrator.setRandomNumberSeed(1)
    inp = plumed.load(text, s, integrator=integrator)
    opes = inp.opes
    assert opes is not None and inp['o'] is opes and inp.metadynamics is None
    assert (opes.biasFactor, opes.epsilon, opes.kernelCutoff, opes.compressionThreshold) == (8.0, 1e-4, 4.0, 0.5)
    assert list(opes.sigma) == [0.2] and opes.barrier.value_in_unit(unit.kilojoules_per_mole) == 10.0
    assert opes.variables[0].maxValue == 9.0 and opes.variables[0].gridWidth == 226
    assert any('NLIST accepted' in line for line in inp.actions[1].log)
    topology = app.Topology()
    residue = topology.addResidue('X', topology.addChain())
    for _ in range(6):
        topology.addAtom('X', None, residue)
    simulation = app.Simulation(topology, s, integrator, openmm.Platform.getPlatformByName('Reference'))
    simulation.context.setPositions(np.random.RandomState(0).rand(6, 3)*1.5)
    inp.attach(simulation, str(tmp_path))
    inp.step(simulation, 200)
    values = inp.getValues(simulation.context, ['c', 'o.bias', 'o.rct', 'o.zed', 'o.neff', 'o.nker'])
    inp.close()
    history = opes.getHistory()
    assert values[1] == pytest.approx(opes.getBiasAt([values[0]]).value_in_unit(unit.kilojoules_per_mole), rel=1e-12)
    assert values[2] == pytest.approx(history.rct[-1].value_in_unit(unit.kilojoules_per_mole), rel=1e-12)
    assert values[3:] == [pytest.approx(history.zed[-1]), pytest.approx(history.neff[-1]), history.nker[-1]]
    # PLUMED's OPESmetad sets nker (rct, zed, neff) in update(), after the kernel of that step, and PRINT writes
    # in the update phase after it: a row at a kernel's step has the count after that kernel
    rows = np.loadtxt(str(tmp_path/'COLVAR'))
    assert rows.shape == (11, 7) and len(history.nker) == 11 and history.nker[-1] > 0
    assert list(history.steps) == list(range(0, 201, 20)) and list(rows[:, 6]) == list(history.nker)
    with pytest.raises(plumed.PlumedInputError, match='one METAD or OPES'):
        plumed.load(text + 'o2: OPES_METAD_EXPLORE ARG=c PACE=20 BARRIER=10 SIGMA=0.2 TEMP=300\n', system(6))


def test_opes_explore_adaptive():
    inp = plumed.load(OPES_CV + 'o: OPES_METAD_EXPLORE ARG=c PACE=20 BARRIER=10 SIGMA=ADAPTIVE SIGMA_MIN=0.05 TEMP=300 '
                      'ADAPTIVE_SIGMA_STRIDE=200 FIXED_SIGMA\n', system(6))
    opes = inp.opes
    assert getattr(opes, 'exploreMode', getattr(opes, 'explore', None)) is True
    assert opes.sigma is None and list(opes.sigmaMin) == [0.05] and opes.adaptiveSigmaStride == 200 and opes.fixedSigma
    assert opes.variables[0].gridWidth == 901


def test_dumpderivatives_of_functions(tmp_path):
    """A function's derivatives are those with respect to its arguments (PLUMED's DUMPDERIVATIVES),
    analytic: COMBINE's c_i e_i (x_i - p_i)^(e_i - 1), CUSTOM's by the expression."""
    from openmm import app, unit
    text = ('c1: COORDINATION GROUPA=1-4 R_0=0.3\nc2: COORDINATION GROUPA=1-3 R_0=0.3\n'
            'f: COMBINE ARG=c1,c2 COEFFICIENTS=2,-3 PARAMETERS=0.5,0 POWERS=2,1 PERIODIC=NO\n'
            'g: CUSTOM ARG=c1,f VAR=a,b FUNC=a*exp(b)+sin(pi*a) PERIODIC=NO\n'
            'DUMPDERIVATIVES ARG=f,g FILE=deriv FMT=%12.8f\n')
    s = system()
    s.setDefaultPeriodicBoxVectors(*np.eye(3)*2.0)
    inp = plumed.load(text, s)
    topology = app.Topology()
    residue = topology.addResidue('X', topology.addChain())
    for _ in range(4):
        topology.addAtom('X', None, residue)
    simulation = app.Simulation(topology, s, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    simulation.context.setPositions(POSITIONS)
    inp.attach(simulation, str(tmp_path))
    inp.close()
    c1, c2, f = inp.getValues(simulation.context, ['c1', 'c2', 'f'])
    lines = (tmp_path/'deriv').read_text().splitlines()
    assert lines[0] == '#! FIELDS time parameter f g'
    rows = [[float(x) for x in line.split()] for line in lines[1:]]
    assert len(rows) == 2 and [r[1] for r in rows] == [0, 1]
    expected = [(2*2*(c1 - 0.5), math.exp(f) + math.pi*math.cos(math.pi*c1)), (-3.0, c1*math.exp(f))]
    for row, (df, dg) in zip(rows, expected):
        assert row[2] == pytest.approx(df, abs=1e-8) and row[3] == pytest.approx(dg, abs=1e-8)
    with pytest.raises(plumed.PlumedInputError, match='different numbers of derivatives'):
        plumed.load(text.replace('ARG=f,g FILE', 'ARG=c1,f FILE'), system())
