"""Pictures with matplotlib (imported only when a plot is made): g(r) with the switching function and
n(r), the coordination number over time, the free energy of one to three variables (a profile, a
map, a slice or projection of three) and the convergence of an estimate over time.

Each function returns a matplotlib Figure (shown inline in a notebook) and writes it to ``path``
(PNG, or any format matplotlib knows by the extension) when one is given. No pyplot state is used.
"""

import numpy as np

__all__ = ['plotPairDistribution', 'plotCollectiveVariable', 'plotFreeEnergy', 'plotConvergence']


def _series(owner, times, values):
    """times (ps) and values (one column per curve) as arrays, checked: at least one time, one row of
    values per time; ValueError naming the function and the sizes otherwise."""
    times = np.asarray(times, dtype=float).ravel()
    values = np.asarray(values, dtype=float)
    if len(times) == 0:
        raise ValueError('%s: times is empty: nothing to plot' % owner)
    if values.size == 0 or values.size % len(times) != 0 or (values.ndim > 0 and values.shape[0] != len(times)):
        raise ValueError('%s: values must have one row per time (%d), got shape %s' % (owner, len(times), values.shape))
    return times, values.reshape(len(times), -1)


def _figure(width, height, rows=1, heightRatios=None):
    from matplotlib.figure import Figure
    figure = Figure(figsize=(width, height), dpi=120, layout='constrained')
    axes = figure.subplots(rows, 1, sharex=True, gridspec_kw=None if heightRatios is None else {'height_ratios': heightRatios})
    return figure, axes


def _save(figure, path):
    if path is not None:
        figure.savefig(str(path))
    return figure


# The background of the labels drawn on the curves.
_LABEL_BOX = dict(boxstyle='round,pad=0.2', fc='white', ec='none', alpha=0.8)


def _drawSwitchingFunction(top, force, upper):
    """Draw the force's s(r) on a second axis of the g(r) panel, d0 + r0 marked; returns its line."""
    from openmmcoordination.gr import _value
    right = top.twinx()
    rs = np.linspace(0.0, upper, 400)
    switching = np.array([force.evaluateSwitchingFunction(float(x))[0] for x in rs])
    line, = right.plot(rs, switching, color='C1', lw=1.4, ls='--', label='switching function s(r)')
    right.set_ylim(0, 1.05)
    right.set_ylabel('s(r)', color='C1')
    r0, d0 = _value(force.getR0()), _value(force.getD0())
    s0 = force.evaluateSwitchingFunction(d0 + r0)[0]
    right.plot([d0 + r0], [s0], 'o', color='C1', ms=4)
    right.annotate('r0 = %.3f nm' % r0 if d0 == 0 else 'd0 + r0 = %.3f nm' % (d0 + r0), (d0 + r0, s0),
                   textcoords='offset points', xytext=(8, 4), color='C1', fontsize=8, bbox=_LABEL_BOX)
    return line


def _markFirstMinimum(top, bottom, gr, minimum):
    """Mark a distance (nm) in both panels, with n(r) there in the lower one."""
    n = gr.coordinationAt(minimum)
    top.axvline(minimum, color='C3', lw=1.0, ls='-.', label='first minimum of g(r): %.3f nm' % minimum)
    bottom.axvline(minimum, color='C3', lw=1.0, ls='-.')
    bottom.plot([minimum], [n], 'o', color='C3', ms=4)
    bottom.annotate('n(%.3f nm) = %.2f' % (minimum, n), (minimum, n), textcoords='offset points', xytext=(6, 6),
                    color='C3', fontsize=8, bbox=_LABEL_BOX)
    if n > 0:
        bottom.set_ylim(0, 3.0*n)


def plotPairDistribution(gr, force=None, firstMinimum=True, path=None, title=None, maxDistance=None):
    """Plot g(r) (upper panel, left axis), the force's switching function s(r) (upper panel, right
    axis) and the running coordination number n(r) (lower panel), with the first minimum of g(r)
    marked and the range beyond minimum image validity shaded.

    Parameters
    ----------
    gr: PairDistribution
    force: CoordinationForce (optional)
        draws its s(r) and marks r0
    firstMinimum: bool, Quantity or float
        mark gr.getFirstMinimum() (True; nothing where g(r) has no pair), a given distance (a
        Quantity, or a number in nm), or nothing (False)
    path: str (optional)
        the file to write
    title: str (optional)
    maxDistance: Quantity or float (optional)
        the upper limit of the r axis (a Quantity, or a number in nm); default the histogram's range
    """
    from openmmcoordination.gr import _distance
    figure, (top, bottom) = _figure(6.4, 5.6, 2, [2, 1])
    r = gr.r
    finite = np.isfinite(gr.g)
    pairList = gr.mode == 'pair list'
    top.plot(r[finite], gr.g[finite], color='C0', lw=1.6, label='p(r)' if pairList else 'g(r)')
    if not pairList:
        top.axhline(1.0, color='0.6', lw=0.8, ls=':')
    top.set_ylabel('p(r) (1/nm)' if pairList else 'g(r)', color='C0')
    top.set_ylim(bottom=0)
    bottom.plot(gr.edges[1:], gr.n, color='C2', lw=1.6)
    bottom.set_ylabel('n(r)' if not pairList else 'pairs within r')
    bottom.set_xlabel('r (nm)')
    bottom.set_ylim(bottom=0)
    upper = gr.edges[-1] if maxDistance is None else _distance(maxDistance, 'plotPairDistribution', 'maxDistance')
    for ax in (top, bottom):
        ax.set_xlim(0, upper)
        ax.grid(alpha=0.3)
        if gr.validMax < upper:
            ax.axvspan(gr.validMax, upper, color='0.85', alpha=0.6, lw=0,
                       label='beyond half the shortest box vector' + (' (shells corrected)' if gr.corrected else ''))
    handles = [] if force is None else [_drawSwitchingFunction(top, force, upper)]
    if firstMinimum is True and not pairList and np.any(np.where(r < gr.cellMax, gr.g, np.nan) > 0):
        _markFirstMinimum(top, bottom, gr, gr.firstMinimum())
    elif not (firstMinimum is None or isinstance(firstMinimum, bool)):
        _markFirstMinimum(top, bottom, gr, _distance(firstMinimum, 'plotPairDistribution', 'firstMinimum'))
    lines, labels = top.get_legend_handles_labels()
    top.legend(lines + handles, labels + [h.get_label() for h in handles], loc='upper right', fontsize=8)
    if title is None:
        title = '%s, %d frame%s' % ('pair distance distribution' if pairList else 'radial distribution function',
                                    gr.numFrames, '' if gr.numFrames == 1 else 's')
    top.set_title(title, fontsize=10)
    return _save(figure, path)


def plotCollectiveVariable(times, values, path=None, names=None, title=None, ylabel='coordination number',
                           runningAverage=True):
    """Plot coordination numbers over time. ``times`` in ps; ``values`` one column per CV."""
    times, values = _series('plotCollectiveVariable', times, values)
    figure, ax = _figure(6.4, 3.6)
    if names is None:
        names = ['cv'] if values.shape[1] == 1 else ['cv%d' % i for i in range(values.shape[1])]
    for k in range(values.shape[1]):
        ax.plot(times, values[:, k], lw=0.8, color='C%d' % k, alpha=0.8 if runningAverage else 1.0, label=names[k])
        if runningAverage and len(times) >= 10:
            window = max(2, len(times)//20)
            kernel = np.ones(window)/window
            smooth = np.convolve(values[:, k], kernel, mode='valid')
            ax.plot(times[window-1:], smooth, lw=1.8, color='C%d' % k, alpha=1.0,
                    label='%s, running mean over %d frames' % (names[k], window))
    return _finishTimePlot(figure, ax, ylabel, 'collective variable over time' if title is None else title, path)


def _finishTimePlot(figure, ax, ylabel, title, path):
    """The labels, grid, legend and title of a plot against time (ps); writes it to path."""
    ax.set_xlabel('time (ps)')
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc='best')
    ax.set_title(title, fontsize=10)
    return _save(figure, path)


def _kJ(values):
    """An array in kJ/mol from an array or an energy Quantity."""
    if hasattr(values, 'value_in_unit'):
        from openmm import unit
        values = values.value_in_unit(unit.kilojoules_per_mole)
    return np.asarray(values, dtype=float)


def _axes(grid, freeEnergy):
    """The grid as a list of 1-D arrays (an array alone: one variable), checked against the shape of
    the free energy (axis 0 the last variable, as Metadynamics.getFreeEnergy())."""
    if isinstance(grid, np.ndarray) and grid.ndim == 1 or all(np.isscalar(x) for x in grid):
        axes = [np.asarray(grid, dtype=float)]
    else:
        axes = [np.asarray(axis, dtype=float) for axis in grid]
    if not 1 <= len(axes) <= 3 or freeEnergy.shape != tuple(len(a) for a in reversed(axes)):
        raise ValueError('plotFreeEnergy: the free energy of shape %s does not match a grid of %s points (axis 0 the last '
                         'variable)' % (freeEnergy.shape, ' x '.join(str(len(a)) for a in axes)))
    return axes


def _project(axes, f, temperature, slice_):
    """A 3-D free energy as 2-D: the plane nearest ``slice_ = (variable, value)``, or without one the
    projection -kT ln sum exp(-F/kT) over the third variable. Returns (axes, F, what was done)."""
    if slice_ is not None:
        variable, value = slice_
        k = int(np.argmin(np.abs(axes[variable] - value)))
        f = np.take(f, k, axis=2 - variable)
        kept = [a for i, a in enumerate(axes) if i != variable]
        return kept, f, 'slice at c%d = %.3g' % (variable + 1, axes[variable][k])
    from openmm import unit
    kT = (unit.MOLAR_GAS_CONSTANT_R*temperature).value_in_unit(unit.kilojoules_per_mole)
    low = np.nanmin(f)
    with np.errstate(divide='ignore'):
        projected = low - kT*np.log(np.nansum(np.exp(-(f - low)/kT), axis=0))
    return axes[:2], projected, 'projected on c1, c2 (-kT ln sum over c3)'


def plotFreeEnergy(grid, freeEnergy, path=None, sampled=None, references=(), title=None, label='this run',
                   xlabel=None, ylabel=None, basins=None, slice=None, temperature=None, ax=None):
    """Plot a free energy in kJ/mol, shifted so its minimum over the sampled region is 0: a curve for
    one variable, a map (filled contours, the region not sampled grey) for two, and for three the map
    of a slice or of the projection on the first two.

    Parameters
    ----------
    grid: a list of 1 to 3 arrays (getCollectiveVariableGrid()), or an array for one variable
    freeEnergy: array (or Quantity) of the layout of Metadynamics.getFreeEnergy(): axis 0 the last variable
    sampled: (optional) one variable: the (low, high) range the run visited; two or three: a boolean
        array of freeEnergy's shape, True where the run sampled
    references: list of (grid, freeEnergy, label), one variable: other profiles drawn the same way
    xlabel, ylabel: the names of the first and second variables (default 'coordination number' for
        one, 'c1' and 'c2' for a map)
    basins: {name: point} (optional, two or three variables): points (c1, c2) marked with F there
    slice: (variable index, value) (three variables): draw the plane nearest the value; default the
        projection -kT ln sum exp(-F/kT) over the third variable, at ``temperature`` (default 300 K)
    ax: a matplotlib Axes to draw in (a panel of a figure of one's own); default a new Figure
    """
    f = _kJ(freeEnergy)
    axes = _axes(grid, f)
    if len(axes) == 1:
        return _plotProfile(axes[0], f, path, sampled, references, title, label, xlabel or 'coordination number', ax)
    mask = np.ones(f.shape, dtype=bool) if sampled is None else np.asarray(sampled, dtype=bool)
    f = np.where(mask & np.isfinite(f), f, np.nan)
    what = None
    if len(axes) == 3:
        from openmm import unit
        axes, f, what = _project(axes, f, 300*unit.kelvin if temperature is None else temperature, slice)
    f = f - np.nanmin(f)
    figure, ax = _figure(6.4, 4.8) if ax is None else (ax.figure, ax)
    ax.set_facecolor('0.92')
    top = max(4.0, float(np.ceil(np.nanpercentile(f, 98)/4)*4))
    levels = np.linspace(0, top, 17)
    filled = ax.contourf(axes[0], axes[1], np.minimum(f, top), levels=levels, cmap='viridis')
    ax.contour(axes[0], axes[1], np.minimum(f, top), levels=levels[::2], colors='k', linewidths=0.4, alpha=0.6)
    figure.colorbar(filled, ax=ax).set_label('free energy (kJ/mol)')
    for name, point in (basins or {}).items():
        i, j = int(np.argmin(np.abs(axes[0] - point[0]))), int(np.argmin(np.abs(axes[1] - point[1])))
        ax.plot(point[0], point[1], marker='o', ms=8, mfc='white', mec='k')
        ax.annotate('%s: %.1f kJ/mol' % (name, f[j, i]), tuple(point[:2]), textcoords='offset points', xytext=(8, 8),
                    fontsize=8, bbox=_LABEL_BOX)
    ax.set_xlabel('c1' if xlabel is None else xlabel)
    ax.set_ylabel('c2' if ylabel is None else ylabel)
    default = 'free energy' + ('' if what is None else ', ' + what) + ' (grey: not sampled)'
    ax.set_title(default if title is None else title, fontsize=10)
    return _save(figure, path)


def _plotProfile(grid, f, path, sampled, references, title, label, xlabel, ax):
    """plotFreeEnergy of one variable: the curve over the sampled range, its minimum marked."""
    figure, ax = _figure(6.4, 4.0) if ax is None else (ax.figure, ax)

    def prepare(x, values):
        x, values = np.asarray(x, dtype=float).ravel(), _kJ(values).ravel()
        keep = np.isfinite(values)
        if sampled is not None:
            keep &= (x >= sampled[0]) & (x <= sampled[1])
        return x[keep], values[keep] - (values[keep].min() if keep.any() else 0.0)

    x, f = prepare(grid, f)
    if len(x) == 0:
        raise ValueError('plotFreeEnergy: the free energy has no finite value%s: nothing to plot'
                         % ('' if sampled is None else ' in the sampled range %s' % (tuple(sampled),)))
    ax.plot(x, f, color='C0', lw=1.8, label=label)
    for k, (rg, rf, rl) in enumerate(references):
        rx, ry = prepare(rg[0] if isinstance(rg, list) else rg, rf)
        ax.plot(rx, ry, color='C%d' % (k+1), lw=1.2, ls='--', label=rl)
    i = int(np.argmin(f))
    ax.plot([x[i]], [f[i]], 'o', color='C3', ms=4)
    ax.annotate('minimum at %.2f' % x[i], (x[i], f[i]), textcoords='offset points', xytext=(6, 6), color='C3', fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel('free energy (kJ/mol)')
    ax.set_ylim(bottom=-0.5)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc='best')
    ax.set_title('free-energy profile' if title is None else title, fontsize=10)
    return _save(figure, path)


def plotConvergence(times, values, path=None, names=None, title=None, ylabel='free-energy difference (kJ/mol)'):
    """Plot how an estimate settles with time: a free-energy difference between two regions, c(t), or
    any quantity (a column per curve; energy Quantities accepted), times in ps, the last value marked."""
    times, values = _series('plotConvergence', times, _kJ(values))
    figure, ax = _figure(6.4, 3.6)
    names = names or (['estimate'] if values.shape[1] == 1 else ['estimate %d' % (k + 1) for k in range(values.shape[1])])
    for k in range(values.shape[1]):
        ax.plot(times, values[:, k], lw=1.4, marker='.', color='C%d' % k, label=names[k])
        ax.annotate('%.2f' % values[-1, k], (times[-1], values[-1, k]), textcoords='offset points', xytext=(4, 4),
                    color='C%d' % k, fontsize=8, bbox=_LABEL_BOX)
    return _finishTimePlot(figure, ax, ylabel, 'convergence' if title is None else title, path)
