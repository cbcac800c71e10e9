"""openmmcoordination.plumed refuses what it cannot run exactly: every error path raises
PlumedInputError (a ValueError) naming the line, the action and the keyword, before anything is
added to the System."""

import math

import openmm
import pytest

from openmmcoordination import plumed

from helpers import make_system

C = 'c: COORDINATION GROUPA=1-4 GROUPB=5-8 R_0=0.3\n'
C2 = C + 'c2: COORDINATION GROUPA=1 GROUPB=9 R_0=0.3\n'
M = 'METAD ARG=c SIGMA=0.1 HEIGHT=1 PACE=10 BIASFACTOR=5 TEMP=300 GRID_MIN=0 GRID_MAX=4 GRID_BIN=40'
O = 'OPES_METAD ARG=c PACE=10 BARRIER=10 TEMP=300 SIGMA=0.1'

# input, (line, action, keyword), a fragment of the message
ERRORS = [
    ('FOO ARG=c\n', (1, 'FOO', None), 'not supported: this package reads UNITS, GROUP, COORDINATION'),
    ('DEBUG NOVIRIAL\n', (1, 'DEBUG', 'NOVIRIAL'), 'not supported'),
    ('c: COORDINATION GROUPA=1-4 GROUPB=5-8 R_0=0.3 SERIAL\n', (1, 'COORDINATION', 'SERIAL'), 'not supported'),
    ('c: COORDINATION GROUPA=1-4 SWITCH={CUSTOM FUNC=1/(1+x2^3) R_0=0.3 D_0=0.1}\n', (1, 'COORDINATION: SWITCH={CUSTOM}', 'FUNC'),
     'x2 with D_0'),
    ('c: CONTACTMAP ATOMS1=1,2 SWITCH1={RATIONAL R_0=0.3} SUM CMDIST\n', (1, 'CONTACTMAP', 'CMDIST'), 'distance between'),
    ('c: CONTACTMAP ATOMS1=1,2 SWITCH1={RATIONAL R_0=0.3} REFERENCE1=0.1\n', (1, 'CONTACTMAP', 'REFERENCE1'), 'CMDIST'),
    ('c: CONTACTMAP ATOMS1=1,2 SWITCH1={RATIONAL R_0=0.3}\n', (1, 'CONTACTMAP', 'SUM'), 'is required'),
    ('c: CONTACTMAP ATOMS1=1,2 ATOMS3=3,4 SWITCH={RATIONAL R_0=0.3} SUM\n', (1, 'CONTACTMAP', 'ATOMS1'), 'without gaps'),
    ('c: CONTACTMAP ATOMS1=1,2,3 SWITCH1={RATIONAL R_0=0.3} SUM\n', (1, 'CONTACTMAP', 'ATOMS1'), 'two atoms, got 3'),
    ('c: CONTACTMAP ATOMS1=1,2 SWITCH1={RATIONAL R_0=0.3} ATOMS2=3,4 SWITCH2={RATIONAL R_0=0.3 NN=8} SUM\n',
     (1, 'CONTACTMAP', 'SWITCH2'), 'differs from SWITCH1'),
    ('c: CONTACTMAP ATOMS1=1,2 SWITCH={RATIONAL R_0=0.3} SWITCH1={RATIONAL R_0=0.3} SUM\n',
     (1, 'CONTACTMAP', 'SWITCH1'), 'not both'),
    ('c: CONTACTMAP ATOMS1=1,2 SUM\n', (1, 'CONTACTMAP', 'SWITCH1'), 'not neither'),
    ('d: DISTANCE ATOMS=1,2,3\n', (1, 'DISTANCE', 'ATOMS'), 'two atoms, got 3'),
    ('c: COORDINATION GROUPA=1-4 R_0=abc\n', (1, 'COORDINATION', 'R_0'), "not a number: 'abc'"),
    ('c: COORDINATION GROUPA=1-4 R_0=1e999\n', (1, 'COORDINATION', 'R_0'), 'not a finite number'),
    ('c: COORDINATION GROUPA=1-4 R_0=pi\n', (1, 'COORDINATION', 'R_0'), 'not a number'),
    ('c: COORDINATION GROUPA=1-4 R_0=0.3 NN=6.5\n', (1, 'COORDINATION', 'NN'), 'not an integer'),
    ('c: COORDINATION GROUPA=1-4 R_0=-0.3\n', (1, 'COORDINATION', 'R_0'), 'r0'),
    ('c: COORDINATION GROUPA=1-4 R_0=0.3 NN=6 MM=6\n', (1, 'COORDINATION', 'R_0'), 'm'),
    ('c: COORDINATION GROUPA=0-4 R_0=0.3\n', (1, 'COORDINATION', 'GROUPA'), "PLUMED's atom numbers start at 1"),
    ('c: COORDINATION GROUPA=1-4 GROUPB=100 R_0=0.3\n', (1, 'COORDINATION', 'GROUPB'), 'atom 100 is beyond the 20 particles of the System'),
    ('c: COORDINATION GROUPA=4-1 R_0=0.3\n', (1, 'COORDINATION', 'GROUPA'), 'must go up'),
    ('c: COORDINATION GROUPA=ions R_0=0.3\n', (1, 'COORDINATION', 'GROUPA'), "'ions' is not an atom number"),
    ('c: COORDINATION GROUPA=@water R_0=0.3\n', (1, 'COORDINATION', 'GROUPA'), 'not an atom number'),
    (C + 'e: COORDINATION GROUPA=c R_0=0.3\n', (2, 'COORDINATION', 'GROUPA'), "'c' is a COORDINATION, not a GROUP"),
    ('c: COORDINATION GROUPA=1-4\n', (1, 'COORDINATION', 'R_0'), 'is required (or SWITCH'),
    ('c: COORDINATION GROUPA=1-4 R_0=0.3 SWITCH={EXP R_0=0.3}\n', (1, 'COORDINATION', 'R_0'), 'one way'),
    ('c: COORDINATION GROUPA=1-4 SWITCH={MATRIX R_0=0.3}\n', (1, 'COORDINATION', 'SWITCH'), "'MATRIX' is not one of"),
    ('c: COORDINATION GROUPA=1-4 SWITCH={SMAP R_0=0.3 A=2}\n', (1, 'COORDINATION: SWITCH={SMAP}', 'B'), 'required for SMAP'),
    # PLUMED's r^R_POWER is in the input's length unit (Angstrom^2 here: 100 times the force's nm^2)
    ('UNITS LENGTH=A\nc: COORDINATION_MOMENTS SPECIES=1-8 SWITCH={RATIONAL R_0=3} R_POWER=2 SUM\n',
     (2, 'COORDINATION_MOMENTS', 'R_POWER'), 'with UNITS LENGTH=A: PLUMED takes r^2 in A, the force in nm'),
    ('c: COORDINATION GROUPA=1-4 SWITCH={SMAP R_0=0.3 A=2.5 B=2}\n', (1, 'COORDINATION: SWITCH={SMAP}', 'A'),
     'PLUMED reads A and B of SMAP as integers, got 2.5'),
    ('c: COORDINATION GROUPA=1-4 SWITCH={CUSTOM R_0=0.3}\n', (1, 'COORDINATION: SWITCH={CUSTOM}', 'FUNC'), 'required'),
    ('c: COORDINATION GROUPA=1-4 SWITCH={CUBIC D_0=0.1}\n', (1, 'COORDINATION: SWITCH={CUBIC}', 'D_MAX'), 'required'),
    ('c: COORDINATION GROUPA=1-4 SWITCH={Q R_0=0.3}\n', (1, 'COORDINATION: SWITCH={Q}', 'REF'), 'required for Q'),
    ('c: COORDINATION GROUPA=1-4 SWITCH={EXP D_0=0.1}\n', (1, 'COORDINATION: SWITCH={EXP}', 'R_0'), 'required for EXP'),
    ('c: COORDINATION GROUPA=1-4 SWITCH={EXP R_0=0.3 NN=4}\n', (1, 'COORDINATION: SWITCH={EXP}', 'NN'), 'not supported'),
    ('c: COORDINATION GROUPA=1-4 SWITCH={CUSTOM FUNC=x^2+y R_0=0.3}\n', (1, 'COORDINATION', 'SWITCH'), 'y'),
    ('c: COORDINATION GROUPA=1-4 GROUPB=5-6 PAIR R_0=0.3\n', (1, 'COORDINATION', 'PAIR'), 'as many atoms as GROUPA (4)'),
    ('c: COORDINATION GROUPA=1-4 R_0=0.3 NL_CUTOFF=1\n', (1, 'COORDINATION', 'NL_CUTOFF'), 'without NLIST'),
    # PLUMED counts only the pairs within NL_CUTOFF: one short of where s reaches 0 would drop pairs s counts
    ('c: COORDINATION GROUPA=1-4 R_0=0.3 NLIST NL_CUTOFF=0.8 NL_STRIDE=10\n', (1, 'COORDINATION', 'NL_CUTOFF'),
     '0.8 is shorter than the distance where the switching function reaches 0, 2.043876207 nm'),
    ('UNITS LENGTH=A\nc: COORDINATION GROUPA=1-4 R_0=3 NLIST NL_CUTOFF=20 NL_STRIDE=10\n', (2, 'COORDINATION', 'NL_CUTOFF'),
     'reaches 0, 20.43876207 A'),
    ('c: COORDINATION GROUPA=1-4 SWITCH={EXP R_0=0.3} NLIST NL_CUTOFF=5 NL_STRIDE=10\n', (1, 'COORDINATION', 'NL_CUTOFF'),
     'no cutoff (no D_MAX)'),
    ('c: COORDINATION GROUPA=1-4 SWITCH={COSINUS R_0=0.3 D_0=0.1} NLIST NL_CUTOFF=0.39 NL_STRIDE=10\n',
     (1, 'COORDINATION', 'NL_CUTOFF'), 'reaches 0, 0.4 nm'),
    ('c: COORDINATION GROUPA=1-4 R_0=0.3 NLIST NL_STRIDE=10\n', (1, 'COORDINATION', 'NL_CUTOFF'), 'required with NLIST'),
    ('c: COORDINATION GROUPA=1-4 R_0=0.3 NLIST NL_CUTOFF=3\n', (1, 'COORDINATION', 'NL_STRIDE'), 'required with NLIST'),
    ('c: COORDINATION GROUPA=1-4 R_0=0.3 NOPBC=yes\n', (1, 'COORDINATION', 'NOPBC'), 'is a flag'),
    ('c: COORDINATION GROUPA=1-4 R_0\n', (1, 'COORDINATION', 'R_0'), 'needs a value'),
    ('c: COORDINATION GROUPA=1-4 R_0=0.3 R_0=0.4\n', (1, 'COORDINATION', 'R_0'), 'given twice'),
    ('c: COORDINATION LABEL=d GROUPA=1-4 R_0=0.3\n', (1, 'COORDINATION', 'LABEL'), 'both before'),
    ('c.1: COORDINATION GROUPA=1-4 R_0=0.3\n', (1, 'COORDINATION', 'LABEL'), 'only labels made of letters'),
    (C + C, (2, 'COORDINATION', 'LABEL'), "the label 'c' is used twice (line 1)"),
    ('c: COORDINATION GROUPA=1-4 SWITCH={EXP R_0=0.3\n', (1, None, None), 'without its "}"'),
    ('c: COORDINATION GROUPA=1-4 R_0=0.3}\n', (1, None, None), 'without its "{"'),
    ('c:\n', (1, None, None), 'without an action'),
    ('METAD ...\n ARG=c\n', (1, None, None), 'never closed'),
    ('...\n', (1, None, None), 'closes no block'),
    (C + 'METAD ...\n ARG=c SIGMA=0.1\n... PRINT\n', (4, None, None), 'closes the block of METAD opened at line 2'),
    ('UNITS LENGTH=bohr\n', (1, 'UNITS', 'LENGTH'), "'bohr' is not one of nm, A, um"),
    ('UNITS ENERGY=foo\n', (1, 'UNITS', 'ENERGY'), 'nor a positive number'),
    ('UNITS NATURAL\n', (1, 'UNITS', 'NATURAL'), 'natural units'),
    ('UNITS NATURAL\n', (1, 'UNITS', 'NATURAL'), 'not supported'),
    (C + 'UNITS LENGTH=A\n', (2, 'UNITS', None), 'must come before'),
    ('g: GROUP ATOMS=1 NDX_FILE=x.ndx\n', (1, 'GROUP', 'ATOMS'), 'either ATOMS or NDX_FILE'),
    ('g: GROUP NDX_FILE=missing.ndx\n', (1, 'GROUP', 'NDX_FILE'), 'cannot read'),
    ('g: GROUP ATOMS=1-4 SORT=1\n', (1, 'GROUP', 'SORT'), 'is a flag'),
    (C2 + 'e: CUSTOM ARG=c,c2 FUNC=x*y+acoth(x) PERIODIC=NO\n', (3, 'CUSTOM', 'FUNC'), "acoth() in 'x*y+acoth(x)' is not a function of OpenMM's Lepton"),
    (C2 + 'e: CUSTOM ARG=c,c2 FUNC=x*w PERIODIC=NO\n', (3, 'CUSTOM', 'FUNC'), "'w' in 'x*w' is not a variable of it (x, y)"),
    (C2 + 'e: CUSTOM ARG=c,c2 FUNC=x*(y PERIODIC=NO\n', (3, 'CUSTOM', 'FUNC'), 'cannot read the expression'),
    (C2 + 'e: CUSTOM ARG=c,c2 FUNC=x*y PERIODIC=0,1\n', (3, 'CUSTOM', 'PERIODIC'), 'only PERIODIC=NO'),
    (C2 + 'e: CUSTOM ARG=c,c2 FUNC=x*y\n', (3, 'CUSTOM', 'PERIODIC'), 'is required'),
    (C2 + 'e: MATHEVAL ARG=c,c2 VAR=a FUNC=a PERIODIC=NO\n', (3, 'MATHEVAL', 'VAR'), 'one name per argument (2), got 1'),
    (C + 'e: CUSTOM ARG=c,c,c,c FUNC=x PERIODIC=NO\n', (2, 'CUSTOM', 'VAR'), 'required with more than three'),
    (C2 + 's: COMBINE ARG=c,c2 COEFFICIENTS=1,-1 NORMALIZE PERIODIC=NO\n', (3, 'COMBINE', 'NORMALIZE'), 'sum to 0'),
    (C2 + 's: COMBINE ARG=c,c2 COEFFICIENTS=1 PERIODIC=NO\n', (3, 'COMBINE', 'COEFFICIENTS'), 'needs 2 values'),
    (C + 'RESTRAINT ARG=x AT=1 KAPPA=1\n', (2, 'RESTRAINT', 'ARG'), "'x' is not the label of an action above"),
    (C + 'RESTRAINT ARG=c.bias AT=1 KAPPA=1\n', (2, 'RESTRAINT', 'ARG'), 'components'),
    (C + 'RESTRAINT ARG=c AT=1 KAPPA=1 NOTHING=2\n', (2, 'RESTRAINT', 'NOTHING'), 'not supported'),
    (C + 'RESTRAINT ARG=c KAPPA=1\n', (2, 'RESTRAINT', 'AT'), 'is required'),
    (C + 'UPPER_WALLS ARG=c AT=1\n', (2, 'UPPER_WALLS', 'KAPPA'), 'is required'),
    (C + 'LOWER_WALLS ARG=c AT=1 KAPPA=1 EXP=2.5\n', (2, 'LOWER_WALLS', 'EXP'), 'an integer'),
    (C + 'UPPER_WALLS ARG=c AT=1 KAPPA=1 EPS=0\n', (2, 'UPPER_WALLS', 'EPS'), 'must be positive'),
    (C + 'g: GROUP ATOMS=1\nRESTRAINT ARG=g AT=1 KAPPA=1\n', (3, 'RESTRAINT', 'ARG'), "'g' is a GROUP"),
    ('g: GROUP ATOMS=1,2\ne: CUSTOM ARG=g FUNC=x PERIODIC=NO\n', (2, 'CUSTOM', 'ARG'), "'g' is a GROUP; CUSTOM takes"),
    (C2 + 'e: RESTRAINT ARG=c AT=1 KAPPA=1\n' + M.replace('ARG=c', 'ARG=e') + '\n', (4, 'METAD', 'ARG'),
     "'e' is a RESTRAINT; METAD takes COORDINATION or CONTACTMAP or CUSTOM, MATHEVAL or COMBINE or DISTANCE"),
    (C + M.replace('ARG=c', 'ARG=c,c,c,c').replace('SIGMA=0.1', 'SIGMA=0.1,0.1,0.1,0.1') + '\n', (2, 'METAD', 'ARG'),
     '1, 2 or 3 arguments, got 4'),
    (C + M.replace(' BIASFACTOR=5', '') + '\n', (2, 'METAD', 'BIASFACTOR'), 'well-tempered'),
    (C + M.replace('BIASFACTOR=5', 'BIASFACTOR=1') + '\n', (2, 'METAD', 'BIASFACTOR'), 'above 1'),
    (C + M.replace(' GRID_MIN=0', '') + '\n', (2, 'METAD', 'GRID_MIN'), 'the bias lives on a grid'),
    (C + M.replace('GRID_MAX=4', 'GRID_MAX=0') + '\n', (2, 'METAD', 'GRID_MAX'), 'must be above GRID_MIN'),
    (C + M.replace('GRID_BIN=40', 'GRID_BIN=40,3') + '\n', (2, 'METAD', 'GRID_BIN'), 'needs 1 values'),
    (C + M.replace('SIGMA=0.1', 'SIGMA=0.1,0.2') + '\n', (2, 'METAD', 'SIGMA'), 'needs 1 values'),
    (C + M.replace(' HEIGHT=1', '') + '\n', (2, 'METAD', 'HEIGHT'), 'is required'),
    (C + M.replace('TEMP=300', 'TEMP=310') + '\n', (2, 'METAD', 'TEMP'), "310 K differs from the integrator's 300 K"),
    (C + M + ' ADAPTIVE=DIFF\n', (2, 'METAD', 'ADAPTIVE'), 'not supported'),
    (C + M + ' WALKERS_DIR=.\n', (2, 'METAD', 'WALKERS_RSTRIDE'), 'together'),
    (C + M + ' WALKERS_DIR=/no/such/dir WALKERS_RSTRIDE=100\n', (2, 'METAD', None), 'biasDir must be an existing directory'),
    (C + M + ' WALKERS_DIR=. WALKERS_RSTRIDE=15\n', (2, 'METAD', None), 'saveFrequency must be a positive multiple'),
    (C + M + '\n' + M + '\n', (3, 'METAD', None), 'a second adaptive bias (METAD at line 2)'),
    (C + 'PRINT ARG=x\n', (2, 'PRINT', 'ARG'), "'x' is not the label"),
    (C + 'r: RESTRAINT ARG=c AT=1 KAPPA=1\nPRINT ARG=r.force2\n', (3, 'PRINT', 'ARG'), 'only label.bias'),
    (C + 'r: RESTRAINT ARG=c AT=1 KAPPA=1\nPRINT ARG=r\n', (3, 'PRINT', 'ARG'), 'use r.bias for its energy'),
    (C + 'PRINT ARG=c FMT=%d%d\n', (2, 'PRINT', 'FMT'), 'not a format'),
    (C + 'PRINT ARG=c STRIDE=0\n', (2, 'PRINT', 'STRIDE'), 'positive'),
    (C + 'PRINT ARG=c STRIDE=10 RESTART=YES\n', (2, 'PRINT', 'RESTART'), 'not supported'),
    (C + 'c2: COORDINATION GROUPA=1 GROUPB=9 R_0=0.3 NOPBC\nRESTRAINT ARG=c,c2 AT=1,1 KAPPA=1,1\n',
     (2, 'COORDINATION', 'NOPBC'), 'cannot join the other CVs in one CoordinationBiasForce'),
    # Found by fuzzing the reader with mutated inputs: each was a crash, a hang or an error without the line.
    ('COORDINATION LABEL GROUPA=1-4 R_0=0.3\n', (1, 'COORDINATION', 'LABEL'), 'needs a value'),
    ('UNITS ENERGY=kcal/mol\n' + C + 'RESTRAINT ARG=c AT=1 KAPPA=1e308\n', (3, 'RESTRAINT', 'KAPPA'),
     '1e+308 is not finite in this package\'s units (times 4.184)'),
    ('UNITS ENERGY=kcal/mol\n' + C + 'UPPER_WALLS ARG=c AT=1 KAPPA=1e308\n', (3, 'UPPER_WALLS', 'KAPPA'),
     'is not finite in this package\'s units'),
    (C + 'UPPER_WALLS ARG=c AT=1e308 KAPPA=1 OFFSET=-1e308\n', (2, 'UPPER_WALLS', 'OFFSET'), 'gives a wall at inf'),
    ('UNITS ENERGY=kcal/mol\n' + C + 'METAD ARG=c SIGMA=0.1 HEIGHT=1e308 PACE=10 BIASFACTOR=5 TEMP=300 GRID_MIN=0 GRID_MAX=4 '
     'GRID_BIN=40\n', (3, 'METAD', 'HEIGHT'), 'is not finite in this package\'s units (times 4.184)'),
    ('c: COORDINATION GROUPA=1-4 SWITCH={CUSTOM FUNC=cos(x)+sqrt(-1) R_0=0.3}\n', (1, 'COORDINATION', 'SWITCH'),
     'has a part without variables that is not a number'),
    ('c: COORDINATION GROUPA=1-4 SWITCH={CUSTOM FUNC=(-1)^x R_0=0.3}\n', (1, 'COORDINATION', 'SWITCH'), 'its derivative by x'),
    (C + 'PRINT ARG=c FILE=\n', (2, 'PRINT', 'FILE'), "needs the name of a file, got ''"),
    (C + 'PRINT ARG=c FILE=out/\n', (2, 'PRINT', 'FILE'), "needs the name of a file, got 'out/'"),
    (C + 'DUMPDERIVATIVES ARG=c FILE=\n', (2, 'DUMPDERIVATIVES', 'FILE'), 'needs the name of a file'),
    # PLUMED 2.10 differentiates the functions of per-atom coordination numbers through their vector: refused
    ('n: COORDINATIONNUMBER SPECIES=1-6 R_0=0.3 SUM\nDUMPDERIVATIVES ARG=n.sum FILE=der\n', (2, 'DUMPDERIVATIVES', 'ARG'),
     "'n_sum' is a function of per-atom coordination numbers (COORDINATIONNUMBER)"),
    ('n: COORDINATIONNUMBER SPECIES=1-6 R_0=0.3\nm: MOMENTS ARG=n POWERS=2\nDUMPDERIVATIVES ARG=m.moment-2 FILE=der\n',
     (3, 'DUMPDERIVATIVES', 'ARG'), "is a function of per-atom coordination numbers (MOMENTS)"),
    (C + M + ' FILE=\n', (2, 'METAD', 'FILE'), 'needs the name of a file'),
    # PLUMED's OFile writes a name ending in .gz compressed (gzip): refused, not written as plain text
    (C + 'PRINT ARG=c FILE=COLVAR.gz\n', (2, 'PRINT', 'FILE'), 'ends in .gz compressed (gzip)'),
    (C + 'DUMPDERIVATIVES ARG=c FILE=der.gz\n', (2, 'DUMPDERIVATIVES', 'FILE'), 'ends in .gz compressed'),
    (C + M + ' FILE=HILLS.gz\n', (2, 'METAD', 'FILE'), 'ends in .gz compressed'),
    (C + O + ' FILE=KERNELS.gz\n', (2, 'OPES_METAD', 'FILE'), 'ends in .gz compressed'),
    (C + M.replace('SIGMA=0.1', 'SIGMA=0') + '\n', (2, 'METAD', 'SIGMA'), 'must be positive, got 0'),
    (C + M.replace('SIGMA=0.1', 'SIGMA=1e308') + '\n', (2, 'METAD', 'SIGMA'), '1e+308 with the grid from 0 to 4'),
    (C + O.replace('SIGMA=0.1', 'SIGMA=1e308') + '\n', (2, 'OPES_METAD', 'SIGMA'), '1e+308 with the grid from 0 to'),
    (C + M.replace(' GRID_BIN=40', '').replace('SIGMA=0.1', 'SIGMA=1e-300') + '\n', (2, 'METAD', 'SIGMA'),
     'gives a grid of more than 10000000 points'),
    (C + M.replace('GRID_BIN=40', 'GRID_SPACING=1e-320') + '\n', (2, 'METAD', 'GRID_SPACING'), 'more than 10000000 points'),
    (C2 + M.replace('ARG=c', 'ARG=c,c2').replace('SIGMA=0.1', 'SIGMA=0.1,0.1').replace('GRID_MIN=0', 'GRID_MIN=0,0')
     .replace('GRID_MAX=4', 'GRID_MAX=4,4').replace('GRID_BIN=40', 'GRID_BIN=4000,4000') + '\n', (3, 'METAD', 'GRID_BIN'),
     'a grid of 4001 x 4001 = 16008001 points, more than 10000000'),
    (C2 + M.replace('ARG=c', 'ARG=c,c2').replace('SIGMA=0.1', 'SIGMA=0.001,0.001').replace('GRID_MIN=0', 'GRID_MIN=0,0')
     .replace('GRID_MAX=4', 'GRID_MAX=4,4').replace(' GRID_BIN=40', '') + '\n', (3, 'METAD', 'SIGMA'),
     'a grid of 20001 x 20001 = 400040001 points, more than 10000000'),
    (C + O.replace('SIGMA=0.1', 'SIGMA=-0') + '\n', (2, 'OPES_METAD', 'SIGMA'), 'must be positive'),
    (C + O.replace('SIGMA=0.1', 'SIGMA=ADAPTIVE SIGMA_MIN=0') + '\n', (2, 'OPES_METAD', 'SIGMA_MIN'), 'must be positive'),
    (C + O.replace('SIGMA=0.1', 'SIGMA=1e-320') + '\n', (2, 'OPES_METAD', 'SIGMA'), 'more than 2000000 grid points'),
]


@pytest.mark.parametrize('text,where,fragment', ERRORS, ids=['%d' % i for i in range(len(ERRORS))])
def test_error(text, where, fragment):
    system = make_system(20)
    integrator = openmm.LangevinMiddleIntegrator(300, 1, 0.002)
    with pytest.raises(plumed.PlumedInputError) as raised:
        # periodic=True: the CVs without NOPBC take the nearest image, as PLUMED given a box (the System has no
        # periodic force); a NOPBC CV beside them is then refused in one bias force
        plumed.load(text, system, integrator=integrator, periodic=True)
    error = raised.value
    assert isinstance(error, ValueError)
    assert (error.line, error.action, error.keyword) == where, str(error)
    assert fragment in str(error), str(error)
    expected = 'input line %d: ' % where[0] + ''.join('%s: ' % part for part in where[1:] if part)
    assert str(error).startswith(expected), str(error)
    assert system.getNumForces() == 0


def test_errors_without_a_system():
    """Without an integrator TEMP is required; without a System atom numbers are checked against a
    Topology, or only for being positive; a file that does not exist is named."""
    from openmm import app
    text = 'c: COORDINATION GROUPA=1-4 GROUPB=5-8 R_0=0.3\n' + M.replace(' TEMP=300', '') + '\n'
    with pytest.raises(plumed.PlumedInputError, match='line 2: METAD: TEMP: is required without an integrator'):
        plumed.load(text)
    topology = app.Topology()
    chain = topology.addChain()
    for _ in range(6):
        topology.addAtom('X', None, topology.addResidue('X', chain))
    with pytest.raises(plumed.PlumedInputError, match='atom 7 is beyond the 6 particles of the Topology'):
        plumed.load(text, topology=topology)
    assert plumed.load('c: COORDINATION GROUPA=1-4 GROUPB=5-8000 R_0=0.3\n')['c'].getNumPairs() == 4*7996
    with pytest.raises(plumed.PlumedInputError, match='no_such_plumed.dat: no such file'):
        plumed.load('no_such_plumed.dat')


def test_file_that_cannot_be_opened(tmp_path):
    """A PRINT whose FILE is in a folder that does not exist: attach() raises PlumedInputError naming
    the line, the action and FILE."""
    from openmm import app
    system = make_system(20)
    inp = plumed.load(C + 'PRINT ARG=c FILE=no/such/folder/colvar\n', system)
    simulation = app.Simulation(app.Topology(), system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    simulation.context.setPositions([openmm.Vec3(0.3*i, 0, 0) for i in range(20)])
    with pytest.raises(plumed.PlumedInputError, match="input line 2: PRINT: FILE: cannot be opened: .*No such file or directory"):
        inp.attach(simulation, str(tmp_path))


def test_expression_overflow_is_nan():
    """A CUSTOM whose value or derivatives overflow gives NaN (as evaluate() does), not OverflowError."""
    from openmmcoordination.plumed.expressions import Expression
    expression = Expression('x*y+y^2^1000', ['x', 'y'])
    assert all(math.isnan(d) for d in expression.gradient({'x': 1.0, 'y': 2.0}))
    assert math.isnan(expression.evaluate({'x': 1.0, 'y': 2.0}))
    assert Expression('x*y', ['x', 'y']).gradient({'x': 1.0, 'y': 2.0}) == [2.0, 1.0]
