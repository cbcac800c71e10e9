"""DUMPDERIVATIVES of a DISTANCE (issue 40, must-have 2): its length, its components label.x, .y, .z and a
NOPBC one, and a CUSTOM of a DISTANCE, a component and a coordination number, under UNITS LENGTH=A.

PLUMED's derivatives of a DISTANCE (src/colvar/Distance.cpp), r the second atom's position less the
first's (the nearest image unless NOPBC), d = |r|: of d, -r/d and r/d by the two atoms' x, y, z and the
box derivatives -(r (x) r)/d; of the component k, -e_k and e_k, and -(r (x) e_k); rows and columns x, y, z,
row-major, as the coordination numbers' (which match PLUMED's deriv.reference, test_plumed_regtests.py).
In the input's length unit: d in Angstrom, the atoms' derivatives dimensionless, the box's in Angstrom.

The box is test_plumed_opes_distance's triclinic BOX and the pair (1, 2) is placed where OpenMM's image
of it is not the nearest (test_distance_bias_alone.FAR); the NOPBC pair (3, 4) lies a box vector further
than its nearest image. The derivatives are checked against NumPy's formulas at NumPy's nearest image,
against central finite differences of the printed values (PlumedInput.getValues) by each atom
coordinate, and, for the box, against -dv/dh under the homogeneous deformation x -> x (1 + h E_ab) of
the box and the positions together (test_plumed_regtests.test_derivatives_of_rotated_frames' definition).
A function's derivatives are those by its arguments, as PLUMED's. Runs on each configuration of the
`platform_config` fixture (the coordination number in the function is computed on it)."""

import types

import numpy as np
import pytest

import openmm
from openmm import app, unit

from openmmcoordination import plumed

from helpers import box_derivative_differences
from test_distance_bias_alone import massless_system, nearest
from test_distance_bias_alone import positions as pair_positions
from test_plumed_opes_distance import BOX, image

#: nm per Angstrom.
ANGSTROM = 0.1
INPUT = ('UNITS LENGTH=A\n'
         'd: DISTANCE ATOMS=1,2\n'
         'e: DISTANCE ATOMS=1,2 COMPONENTS\n'
         'n: DISTANCE ATOMS=3,4 NOPBC\n'
         'c: COORDINATION GROUPA=3 GROUPB=4 R_0=3\n'
         'f: CUSTOM ARG=d,c,e.z FUNC=x*y+z^2 PERIODIC=NO\n'
         'DUMPDERIVATIVES ARG=d,e.x,e.y,e.z,n FILE=deriv FMT=%14.9f STRIDE=2\n'
         'DUMPDERIVATIVES ARG=f FILE=derivf\n')
ARGS = ['d', 'e.x', 'e.y', 'e.z', 'n']


def positions():
    """test_distance_bias_alone's pairs, particle 4 moved by the box vector a: its NOPBC vector is FAR + a."""
    p = pair_positions()
    p[3] += np.array(list(BOX[0]))
    return p


def expected_derivatives(p):
    """NumPy's 15 derivatives (6 atoms', 9 box's in Angstrom) of each of ARGS, columns in ARGS' order."""
    r = nearest(p, 0, 1)
    columns = []
    length = np.linalg.norm(r)
    columns.append(np.concatenate([-r/length, r/length, -np.outer(r, r).ravel()/length/ANGSTROM]))
    for k in range(3):
        e = np.eye(3)[k]
        columns.append(np.concatenate([-e, e, -np.outer(r, e).ravel()/ANGSTROM]))
    raw = p[3] - p[2]
    columns.append(np.concatenate([-raw, raw, -np.outer(raw, raw).ravel()/ANGSTROM])/np.linalg.norm(raw))
    return np.array(columns).T


def coordination(inp, r):
    """c at r (nm): its force's switching function (PLUMED's RATIONAL, NN=6, MM=12, R_0 = 3 Angstrom, with its D_MAX and
    stretch; the switching functions themselves are tested against PLUMED in test_plumed_regtests.py)."""
    return inp.values['c'].obj.evaluateSwitchingFunction(float(r))[0]


def frame(p, box):
    """A stand-in for an OpenMM State holding ``p`` and ``box`` (nm), for PlumedInput.getValues: a box
    deformed by h E_ab with a < b is no longer in OpenMM's reduced form, which a Context refuses."""
    return types.SimpleNamespace(
        getPositions=lambda asNumpy=False: unit.Quantity(np.array(p), unit.nanometer),
        getPeriodicBoxVectors=lambda asNumpy=False: unit.Quantity(np.array(box), unit.nanometer))


@pytest.fixture
def dumped(platform_config, tmp_path):
    """The input attached to a Simulation of the massless System at positions() on the configuration, run 2
    steps (the particles have no mass: they stay); the input, the Simulation and the two files' lines."""
    system, topology = massless_system()
    inp = plumed.load(INPUT, system, periodic=True)         # the nearest image in BOX, as PLUMED given the box
    simulation = app.Simulation(topology, system, openmm.VerletIntegrator(0.001), platform_config.platform(),
                                platform_config.properties)
    simulation.context.setPositions(positions())
    inp.attach(simulation, str(tmp_path))
    simulation.step(2)
    inp.close()
    files = [(tmp_path/name).read_text().splitlines() for name in ('deriv', 'derivf')]
    return inp, simulation, files


def test_file_format(dumped):
    """PLUMED's DUMPDERIVATIVES file: the FIELDS line, then per report (steps 0 and 2 at STRIDE=2) one line per
    parameter, ' %f %d' (time, parameter) and ' ' + FMT per argument; 15 parameters of a DISTANCE (2 atoms
    and the box), 3 of a function of 3 arguments (every step at the default STRIDE)."""
    _, _, (lines, linesf) = dumped
    assert lines[0] == '#! FIELDS time parameter d e.x e.y e.z n'
    assert len(lines) == 1 + 2*15
    for k, line in enumerate(lines[1:]):
        fields = line.split()
        assert len(fields) == 2 + len(ARGS)
        assert line.startswith(' %f %d ' % (0.002*(k // 15), k % 15))
        assert line == ' %f %d' % (0.002*(k // 15), k % 15) + ''.join(' %14.9f' % float(x) for x in fields[2:])
    assert linesf[0] == '#! FIELDS time parameter f'
    assert len(linesf) == 1 + 3*3 and [int(line.split()[1]) for line in linesf[1:]] == [0, 1, 2]*3


def test_distance_derivatives_against_numpy_and_differences(dumped, platform_config):
    """The printed derivatives equal NumPy's formulas at the nearest image (NOPBC: the raw vector, a box vector
    longer); the atoms' equal central differences of the printed values by each coordinate (in Angstrom), the
    box's -dv/dh under x -> x (1 + h E_ab), box and positions together. The nearest image is not OpenMM's own,
    and the NOPBC pair's raw vector is not its nearest image (else the test would not tell them apart)."""
    inp, simulation, (lines, _) = dumped
    p = positions()
    box = np.array([list(v) for v in BOX])
    assert not np.allclose(nearest(p, 0, 1), image(p[1] - p[0])) and not np.allclose(nearest(p, 2, 3), p[3] - p[2])
    printed = np.array([[float(x) for x in line.split()[2:]] for line in lines[1:16]])
    # At the positions the Context holds: in single precision they are p rounded to float.
    held = simulation.context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(unit.nanometer)
    expected = expected_derivatives(np.asarray(held))
    np.testing.assert_allclose(printed, expected, rtol=0, atol=2e-9)
    assert np.abs(expected[6:]).max() > 1.0          # box derivatives that test something (Angstrom)

    context = simulation.context
    values = lambda q, b=box: np.array(inp.getValues(context, ARGS, frame(q, b)))
    assert values(p)[0] == pytest.approx(np.linalg.norm(nearest(p, 0, 1))/ANGSTROM, rel=1e-12)
    assert values(p)[4] == pytest.approx(np.linalg.norm(p[3] - p[2])/ANGSTROM, rel=1e-12)
    h = 1e-6
    numeric = np.zeros((15, len(ARGS)))
    for column, (first, second) in enumerate([(0, 1)]*4 + [(2, 3)]):
        for row, atom in enumerate((first, second)):
            for axis in range(3):
                step = np.zeros_like(p)
                step[atom, axis] = h
                numeric[3*row + axis, column] = ((values(p + step) - values(p - step))/(2*h/ANGSTROM))[column]
    numeric[6:] = box_derivative_differences(lambda b, q: values(q, b), box, p, h)
    np.testing.assert_allclose(printed, numeric, rtol=0, atol=1e-6)
    # through the Context too: the printed values at positions moved by a step, OpenMM's State (in single
    # precision the Context holds float positions, about 1e-7 nm apart here: a step of 1e-3 nm, held to 5e-4)
    single = platform_config.precision == 'single'
    hContext, atol = (1e-3, 5e-4) if single else (h, 1e-6)
    for atom, axis in ((0, 1), (1, 2)):
        step = np.zeros_like(p)
        step[atom, axis] = hContext
        context.setPositions(p + step)
        plus = np.array(inp.getValues(context, ARGS))
        context.setPositions(p - step)
        minus = np.array(inp.getValues(context, ARGS))
        np.testing.assert_allclose((plus - minus)[:4]/(2*hContext/ANGSTROM), printed[3*atom + axis, :4], rtol=0, atol=atol)


def test_function_of_distances_derivatives(dumped, platform_config):
    """f = d*c + e.z^2: its derivatives by its arguments (PLUMED's for a function), c and d and 2 e.z, at NumPy's
    values (d and e.z in Angstrom of the nearest image; c, the coordination of the pair (3, 4), at its nearest
    image, on the configuration); each also the central difference of f's expression by that argument."""
    inp, simulation, (_, linesf) = dumped
    p = positions()
    r = nearest(p, 0, 1)
    d, z = np.linalg.norm(r)/ANGSTROM, r[2]/ANGSTROM
    c = coordination(inp, np.linalg.norm(nearest(p, 2, 3)))
    assert 0.1 < c < 0.9
    tolerance = 1e-8 if platform_config.name == 'Reference' else 1e-5
    assert inp.getValues(simulation.context, ['f'])[0] == pytest.approx(d*c + z*z, rel=tolerance)
    printed = np.array([float(line.split()[2]) for line in linesf[1:4]])
    np.testing.assert_allclose(printed, [c, d, 2*z], rtol=tolerance, atol=1e-9)
    f = lambda x, y, w: x*y + w*w
    h = 1e-6
    differences = [(f(d + h, c, z) - f(d - h, c, z))/(2*h), (f(d, c + h, z) - f(d, c - h, z))/(2*h),
                   (f(d, c, z + h) - f(d, c, z - h))/(2*h)]
    np.testing.assert_allclose(printed, differences, rtol=tolerance, atol=1e-7)
    assert np.allclose(inp.getDerivatives(simulation.context, ['f'])[:, 0], printed, atol=1e-9)


def test_refusals():
    """Still refused, naming the action, the keyword and the value: a DISTANCE beside a function (different
    numbers of derivatives, as PLUMED), the label of a DISTANCE with COMPONENTS alone (no value then), and a
    DISTANCE of an atom to itself."""
    for text, message in (
            ('d: DISTANCE ATOMS=1,2\nf: CUSTOM ARG=d FUNC=x PERIODIC=NO\nDUMPDERIVATIVES ARG=d,f FILE=x\n',
             r'DUMPDERIVATIVES.*ARG.*different numbers of derivatives \(1, 15\)'),
            ('e: DISTANCE ATOMS=1,2 COMPONENTS\nDUMPDERIVATIVES ARG=e FILE=x\n',
             r"DUMPDERIVATIVES.*ARG.*'e' is not the label of an action above"),
            ('d: DISTANCE ATOMS=2,2\nDUMPDERIVATIVES ARG=d FILE=x\n',
             r"DUMPDERIVATIVES.*ARG.*'d' is a DISTANCE of atom 2 to itself")):
        with pytest.raises(plumed.PlumedInputError, match=message):
            plumed.load(text, massless_system()[0])
