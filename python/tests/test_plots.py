"""The pictures are created, as PNG files, with the labels, units and markers they claim."""

import numpy as np
import pytest

pytest.importorskip('matplotlib')

from openmmcoordination import CoordinationForce  # noqa: E402
from openmmcoordination.gr import PairDistribution  # noqa: E402
from openmmcoordination.plots import plotCollectiveVariable, plotFreeEnergy, plotPairDistribution  # noqa: E402

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
    force.setR0(gr.firstMinimum())
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
    # the first minimum marker is drawn where firstMinimum() says
    lines = [line for line in top.get_lines() if line.get_linestyle() == '-.']
    assert lines and lines[0].get_xdata()[0] == pytest.approx(gr.firstMinimum())


def test_pair_distribution_plot_without_force_and_pair_list(tmp_path):
    figure = plotPairDistribution(liquid_like('pair list'), path=str(tmp_path/'p.png'), maxDistance=0.6)
    assert png_size(tmp_path/'p.png')[0] > 600
    words = texts(figure)
    assert 'p(r) (1/nm)' in words and 's(r)' not in words and 'first minimum' not in words
    figure = plotPairDistribution(liquid_like(), firstMinimum=0.5, path=str(tmp_path/'q.png'))
    assert 'first minimum of g(r): 0.500 nm' in texts(figure)


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
