"""The PLUMED inputs printed in docs/ (every ```plumed block) load with openmmcoordination.plumed, so
the docs cannot drift from the reader; the ion-pairing example's PLUMED equivalent gives the
example's CVs and wall; the `openmm-coordination plumed check` and `run` commands."""

import os
import re

import numpy as np
import pytest

import openmm
from openmm import app, unit

from openmmcoordination import plumed
from openmmcoordination.cli import main

from gr_helpers import REPO, import_script
from helpers import make_system

DOCS = os.path.join(REPO, 'docs')
# The pages whose PLUMED inputs must be there (docs/metadynamics.md has only table rows with
# placeholders; a ```plumed block added to any page is loaded too).
PAGES_WITH_INPUTS = ['bias-force.md', 'contacts.md', 'ion-pairing.md', 'plumed-input.md']


def blocks():
    """(page, index, text) of every ```plumed block of docs/."""
    found = []
    for page in sorted(os.listdir(DOCS)):
        if page.endswith('.md'):
            text = open(os.path.join(DOCS, page)).read()
            found += [(page, k, block) for k, block in enumerate(re.findall(r'^```plumed\n(.*?)^```', text, re.M | re.S))]
    return found


def test_the_pages_print_plumed_inputs():
    pages = {page for page, _, _ in blocks()}
    assert set(PAGES_WITH_INPUTS) <= pages, pages


@pytest.mark.parametrize('page,index,text', blocks(), ids=['%s-%d' % (p, k) for p, k, _ in blocks()])
def test_docs_input_loads(page, index, text):
    """Loaded into a System of 998 particles (the ion-pairing box) with an integrator at 300 K."""
    system = make_system(998, np.diag([2.2, 2.2, 2.2]))
    inp = plumed.load(text, system, integrator=openmm.LangevinMiddleIntegrator(300, 1, 0.002))
    assert inp.forces and system.getNumForces() == len(inp.forces)
    assert all(action.python for action in inp.actions)


def test_ion_pairing_input_gives_the_example(capsys):
    """docs/ion-pairing.md's input on the example's CPU system (2.2 nm box, 998 atoms): the same CVs
    as examples/ion_pairing.py builds (values 1e-12 on Reference) and the same wall energy."""
    example = import_script('examples', 'ion_pairing')
    modeller, system, sodium, chloride, oxygens = example.buildSystem(2.2, 0.65)
    assert (sodium, chloride, system.getNumParticles()) == (0, 1, 998) and oxygens == list(range(2, 998, 3))
    text = [block for page, _, block in blocks() if page == 'ion-pairing.md'][0]
    inp = plumed.load(text, system, modeller.topology, openmm.LangevinMiddleIntegrator(300, 1, 0.002))
    nacl, nao = example.collectiveVariables(sodium, chloride, oxygens, example.parseArguments([]))
    positions = modeller.positions.value_in_unit(unit.nanometer)
    positions = np.array([[p.x, p.y, p.z] for p in positions])
    positions[1] = positions[0] + [0.71, 0.1, 0.0]            # beyond the wall at 0.65 nm
    wall = [f for f in system.getForces() if isinstance(f, openmm.CustomBondForce)] + [inp.biasForce]
    assert [f.getName() for f in wall] == ['CustomBondForce', 'PLUMED bias']     # the example's wall, the input's
    assert inp.biasForce.getNumCollectiveVariables() == 1 and inp.biasForce.getDistanceParameters(0) == [0, 1, -1, True]
    wall[0].setForceGroup(2)
    wall[1].setForceGroup(3)
    reference = openmm.Platform.getPlatformByName('Reference')
    context = openmm.Context(system, openmm.VerletIntegrator(0.001), reference)
    context.setPositions(positions)
    values = inp.metadynamics.force.getCollectiveVariableValues(context)
    check = make_system(998, np.diag([2.2, 2.2, 2.2]))
    for group, force in enumerate((nacl, nao)):
        force.setForceGroup(group)
        check.addForce(force)
    checkContext = openmm.Context(check, openmm.VerletIntegrator(0.001), reference)
    checkContext.setPositions(positions)
    expected = [checkContext.getState(getEnergy=True, groups={g}).getPotentialEnergy()._value for g in (0, 1)]
    assert 0.01 < expected[0] < 0.2 and expected[1] > 0.1      # the unminimized box
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    walls = [context.getState(getEnergy=True, groups={g}).getPotentialEnergy()._value for g in (2, 3)]
    assert walls[0] > 1 and walls[1] == pytest.approx(walls[0], rel=1e-12)


def test_check_command(tmp_path, capsys):
    path = tmp_path/'plumed.dat'
    path.write_text('c: COORDINATION GROUPA=1 GROUPB=2-10 R_0=0.3 NOPBC\nRESTRAINT ARG=c AT=2 KAPPA=10\n')
    assert main(['plumed', 'check', str(path)]) == 0
    out = capsys.readouterr().out
    assert 'line 1: c: COORDINATION GROUPA=1 GROUPB=2-10 R_0=0.3 NOPBC\n    c = CoordinationForce([0], list(range(1, 10)))\n' \
           '    c.setR0(0.3)\n    c.setUsesPeriodicBoundaryConditions(False)\n' in out
    assert "bias = CoordinationBiasForce('0.5*10*(c - 2)^2')" in out and 'all supported' in out
    path.write_text('c: COORDINATION GROUPA=1 GROUPB=2-10 R_0=0.3 SQUARED\n')
    assert main(['plumed', 'check', str(path)]) == 1
    assert capsys.readouterr().out == 'error: %s line 1: COORDINATION: SQUARED: not supported (see ' \
                                      'docs/plumed-input.md for what is)\n' % path


def test_run_command(tmp_path, capsys):
    """20 steps of the docs' complete input on the CPU, on Na+ and Cl- in a 2 nm box of TIP3P."""
    modeller = import_script('examples', 'ion_pairing').buildSystem(2.0, 0)[0]
    with open(tmp_path/'nacl.pdb', 'w') as f:
        app.PDBFile.writeFile(modeller.topology, modeller.positions, f)
    natoms = modeller.topology.getNumAtoms()
    text = [block for page, _, block in blocks() if page == 'plumed-input.md'][0]
    (tmp_path/'plumed.dat').write_text(text.replace('3-998:3', '3-%d:3' % natoms).replace('PACE=50', 'PACE=5')
                                       .replace('STRIDE=50', 'STRIDE=5'))
    assert main(['plumed', 'run', str(tmp_path/'plumed.dat'), '--pdb', str(tmp_path/'nacl.pdb'), '--steps', '20',
                 '--platform', 'CPU', '--minimize', '20', '-o', str(tmp_path/'out')]) == 0
    out = capsys.readouterr().out
    assert '737 atoms, platform CPU, 300 K; CoordinationBiasForce, PLUMED bias\n' in out and '4 hills' in out
    colvar = np.loadtxt(str(tmp_path/'out'/'COLVAR'))
    assert open(tmp_path/'out'/'COLVAR').readline() == '#! FIELDS time nacl nao shell d metad.bias wall.bias\n'
    np.testing.assert_allclose(colvar[:, 0], [0, 0.01, 0.02, 0.03, 0.04], atol=1e-6)
    np.testing.assert_allclose(colvar[:, 3], colvar[:, 1] + colvar[:, 2], atol=2e-6)      # shell = nacl + nao
    assert np.all((colvar[:, 4] > 2) & (colvar[:, 4] < 6))                                 # d in A
    hills = np.loadtxt(str(tmp_path/'out'/'HILLS'))
    assert hills.shape == (4, 7) and hills[0, 5] == pytest.approx(0.239*6/5, rel=1e-12)   # kcal/mol, scaled
