"""The pictures are created, as PNG files, with the labels, units and markers they claim."""

import numpy as np
import pytest

from openmm import unit

pytest.importorskip('matplotlib')

from openmmcoordination import CoordinationForce  # noqa: E402
from openmmcoordination.gr import PairDistribution  # noqa: E402
from openmmcoordination.plots import plotCollectiveVariable, plotConvergence, plotFreeEnergy, plotPairDistribution  # noqa: E402

from gr_helpers import png_size  # noqa: E402


def liquid_like(mode='two groups'):
    r = (np.arange(100) + 0.5)*0.01
    g = np.where(r < 0.22, 0.0, 1 + 6*np.exp(-((r - 0.24)/0.015)**2) - 0.9*np.exp(-((r - 0.32)/0.03)**2))
    counts = np.round(2e4*g*4*np.pi*r**2*0.01).astype(np.int64)
    return PairDistribution(np.linspace(0, 1, 101), counts, 100, mode, 300, 1, 300, boxVectors=np.eye(3)*1.6)


def texts(figure):
    found = []
    for ax in figure.axes:
        found += [ax.get_xlabel(), ax.get_ylabel(), ax.get_title()]
        found += [t.get_text() for t in ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            found += [t.get_text() for t in legend.get_texts()]
    return ' | '.join(found)


def test_pair_distribution_plot(tmp_path):
    gr = liquid_like()
    force = CoordinationForce([0], [1])
    force.setR0(gr.getFirstMinimum())           # a Quantity in nm
    path = tmp_path/'gr.png'
    figure = plotPairDistribution(gr, force, path=str(path))
    width, height = png_size(path)
    assert width > 600 and height > 500
    words = texts(figure)
    for expected in ['r (nm)', 'g(r)', 's(r)', 'n(r)', 'first minimum of g(r): 0.3', 'switching function s(r)',
                     'r0 = 0.3', 'beyond half the shortest box vector']:
        assert expected in words, (expected, words)
    assert len(figure.axes) == 3  # g with s on a twin axis, n below
    top = figure.axes[0]
    assert top.get_xlim() == (0.0, 1.0)
    # the first minimum marker is drawn where getFirstMinimum() says
    lines = [line for line in top.get_lines() if line.get_linestyle() == '-.']
    assert lines and lines[0].get_xdata()[0] == pytest.approx(gr.getFirstMinimum().value_in_unit(unit.nanometer))


def test_pair_distribution_plot_without_force_and_pair_list(tmp_path):
    figure = plotPairDistribution(liquid_like('pair list'), path=str(tmp_path/'p.png'), maxDistance=0.6)
    assert png_size(tmp_path/'p.png')[0] > 600
    words = texts(figure)
    assert 'p(r) (1/nm)' in words and 's(r)' not in words and 'first minimum' not in words
    figure = plotPairDistribution(liquid_like(), firstMinimum=0.5, path=str(tmp_path/'q.png'))
    assert 'first minimum of g(r): 0.500 nm' in texts(figure)
    # distances as Quantities in any length unit
    figure = plotPairDistribution(liquid_like(), firstMinimum=4.5*unit.angstrom, maxDistance=8*unit.angstrom,
                                  path=str(tmp_path/'r.png'))
    assert 'first minimum of g(r): 0.450 nm' in texts(figure) and figure.axes[0].get_xlim() == pytest.approx((0.0, 0.8))
    with pytest.raises(ValueError, match='plotPairDistribution: firstMinimum must be a distance .*, got 1 kJ/mol'):
        plotPairDistribution(liquid_like(), firstMinimum=1*unit.kilojoule_per_mole)
    # a histogram without pairs (maxDistance below the closest pair): drawn, with no first minimum to mark
    empty = PairDistribution(np.linspace(0, 0.2, 11), np.zeros(10, dtype=np.int64), 5, 'two groups', 300, 1, 300,
                             boxVectors=np.eye(3)*1.6)
    figure = plotPairDistribution(empty, path=str(tmp_path/'empty.png'))
    assert png_size(tmp_path/'empty.png')[0] > 600 and 'first minimum' not in texts(figure)


def test_collective_variable_plot(tmp_path):
    t = np.arange(200)*0.1
    values = np.column_stack([5 + np.sin(t), 3 + np.cos(t)])
    figure = plotCollectiveVariable(t, values, path=str(tmp_path/'cv.png'), names=['Na-O', 'Cl-O'])
    assert png_size(tmp_path/'cv.png')[0] > 600
    words = texts(figure)
    assert 'time (ps)' in words and 'coordination number' in words and 'Na-O' in words and 'running mean' in words


def test_free_energy_plot(tmp_path):
    grid = np.linspace(0, 10, 201)
    fes = (grid - 6)**2 + 3
    figure = plotFreeEnergy(grid, fes, path=str(tmp_path/'fes.png'), sampled=(3, 9),
                            references=[(grid, fes + 0.3*np.sin(grid), 'openmm.app Metadynamics')])
    assert png_size(tmp_path/'fes.png')[0] > 600
    words = texts(figure)
    assert 'free energy (kJ/mol)' in words and 'coordination number' in words and 'minimum at 6.00' in words
    assert 'openmm.app Metadynamics' in words
    line = figure.axes[0].get_lines()[0]
    assert line.get_xdata().min() >= 3 and line.get_xdata().max() <= 9
    assert line.get_ydata().min() == 0.0


def two_wells():
    """A 2-D free energy on a 41 x 31 grid (axis 0 the second variable): wells at (0.2, 4) and (0.8, 6),
    the second 3 kJ/mol higher."""
    c1, c2 = np.linspace(0, 1, 41), np.linspace(2, 8, 31)
    x, y = np.meshgrid(c1, c2)
    fes = 20 - 20*np.exp(-((x - 0.2)**2/0.02 + (y - 4)**2/0.5)) - 17*np.exp(-((x - 0.8)**2/0.02 + (y - 6)**2/0.5))
    return [c1, c2], fes


def test_free_energy_plot_of_each_dimension(tmp_path):
    """1-D from getCollectiveVariableGrid()'s list of one array; 2-D a map (minimum 0 over the sampled
    region, the rest left blank, basins marked with their F); 3-D a slice and a projection."""
    from openmm import unit
    axis = np.linspace(0, 10, 101)
    figure = plotFreeEnergy([axis], (axis - 6)**2*unit.kilojoules_per_mole, path=str(tmp_path/'1d.png'))
    assert 'minimum at 6.00' in texts(figure)
    grid, fes = two_wells()
    sampled = fes < 19.0
    figure = plotFreeEnergy(grid, fes, path=str(tmp_path/'2d.png'), sampled=sampled, xlabel='c1: Na-Cl',
                            ylabel='c2: Na-O', basins={'CIP': (0.8, 6.0), 'SSIP': (0.2, 4.0)})
    assert png_size(tmp_path/'2d.png')[0] > 600
    words = texts(figure)
    for expected in ['c1: Na-Cl', 'c2: Na-O', 'CIP: 3.0 kJ/mol', 'SSIP: 0.0 kJ/mol', 'not sampled', 'free energy (kJ/mol)']:
        assert expected in words, (expected, words)
    volume = np.repeat(fes[None, :, :], 5, axis=0) + np.linspace(0, 4, 5)[:, None, None]     # c3: 0 to 4 kJ/mol more
    grid3 = grid + [np.linspace(0, 1, 5)]
    figure = plotFreeEnergy(grid3, volume, path=str(tmp_path/'slice.png'), slice=(2, 0.5))
    assert 'slice at c3 = 0.5' in texts(figure)
    figure = plotFreeEnergy(grid3, volume, path=str(tmp_path/'projection.png'), basins={'A': (0.2, 4.0)})
    assert 'projected on c1, c2' in texts(figure) and 'A: 0.0 kJ/mol' in texts(figure)
    with pytest.raises(ValueError, match=r'plotFreeEnergy: the free energy of shape \(31, 41\) does not match a grid of 31 x 41'):
        plotFreeEnergy(grid[::-1], fes)


def test_convergence_plot(tmp_path):
    """A free-energy difference over time, the last value written beside its curve; energy Quantities accepted."""
    from openmm import unit
    times = np.arange(1, 11)*10.0
    estimate = (3.0 + 2.0/np.arange(1, 11))*unit.kilojoules_per_mole
    figure = plotConvergence(times, estimate, path=str(tmp_path/'dF.png'), names=['F(SSIP) - F(CIP)'])
    assert png_size(tmp_path/'dF.png')[0] > 600
    words = texts(figure)
    assert 'F(SSIP) - F(CIP)' in words and 'time (ps)' in words and '3.20' in words and 'free-energy difference (kJ/mol)' in words
    line = figure.axes[0].get_lines()[0]
    np.testing.assert_allclose(line.get_ydata(), 3.0 + 2.0/np.arange(1, 11))


def test_nothing_to_plot(tmp_path):
    """No data, or values that do not match the times (a transposed table was reshaped into other curves),
    or a free energy without a finite value in the range: a ValueError naming the function and the
    parameter, and no file."""
    cases = [(lambda path: plotCollectiveVariable([], [], path=path), 'plotCollectiveVariable: times is empty'),
             (lambda path: plotCollectiveVariable([0.0, 1.0, 2.0], [4.0, 5.0], path=path),
              r'plotCollectiveVariable: values must have one row per time \(3\), got shape \(2,\)'),
             (lambda path: plotCollectiveVariable(np.arange(3.0), np.ones((2, 3)), path=path),
              r'plotCollectiveVariable: values must have one row per time \(3\), got shape \(2, 3\)'),
             (lambda path: plotConvergence([], [], path=path), 'plotConvergence: times is empty'),
             (lambda path: plotFreeEnergy(np.arange(3.0), np.full(3, np.nan), path=path),
              'plotFreeEnergy: the free energy has no finite value: nothing to plot'),
             (lambda path: plotFreeEnergy(np.arange(3.0), np.arange(3.0), sampled=(10, 20), path=path),
              r'plotFreeEnergy: the free energy has no finite value in the sampled range \(10, 20\)')]
    for k, (plot, message) in enumerate(cases):
        with pytest.raises(ValueError, match=message):
            plot(str(tmp_path/('%d.png' % k)))
    assert list(tmp_path.iterdir()) == []
    # one row per time: a column per curve
    figure = plotCollectiveVariable(np.arange(3.0), np.ones((3, 2)), path=str(tmp_path/'two.png'))
    assert len([line for line in figure.axes[0].get_lines()]) == 2
