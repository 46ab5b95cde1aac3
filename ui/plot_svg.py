"""The loss plot as an SVG that other programs draw as the app does (librsvg, ImageMagick, browsers, Inkscape).

Qt's SVG generator writes each curve in its data coordinates under a scaling transform, with a cosmetic
1 px pen and no clip path. Qt draws that right; other renderers scale the stroke with the transform (curves
become bands) and draw what lies outside the axes (a diverging run crosses the page). So the frame, axes,
ticks, labels and legend come from Qt, and the curves, the decade lines and the NaN marks are written here:
in the picture's pixel coordinates, clipped to the plot area (a clip path too), 1 px strokes, no transform.
"""

from __future__ import annotations

import math

import numpy as np


def clip_segments(x: np.ndarray, y: np.ndarray, rect: tuple[float, float, float, float]) -> str:
    """An SVG path ("d") through the points (x, y), in pixels, cut to ``rect`` (left, top, right, bottom).

    A non-finite point leaves a gap, as the plot draws it (connect="finite"). Each segment is clipped to the
    rectangle (Liang-Barsky, all segments at once); a clipped piece that does not continue the last one
    starts a new subpath."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if len(x) < 2:
        return ""
    left, top, right, bottom = rect
    x0, y0, x1, y1 = x[:-1], y[:-1], x[1:], y[1:]
    ok = np.isfinite(x0) & np.isfinite(y0) & np.isfinite(x1) & np.isfinite(y1)
    dx, dy = x1 - x0, y1 - y0
    t_in = np.zeros(len(x0))
    t_out = np.ones(len(x0))
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q in ((-dx, x0 - left), (dx, right - x0), (-dy, y0 - top), (dy, bottom - y0)):
            parallel = p == 0
            ok &= ~(parallel & (q < 0))  # parallel to this edge and outside it
            r = np.where(parallel, 0.0, q / np.where(parallel, 1.0, p))
            entering = p < 0
            t_in = np.where(~parallel & entering, np.maximum(t_in, r), t_in)
            t_out = np.where(~parallel & ~entering, np.minimum(t_out, r), t_out)
    ok &= t_in <= t_out
    ax, ay = x0 + t_in * dx, y0 + t_in * dy
    bx, by = x0 + t_out * dx, y0 + t_out * dy
    parts = []
    last_end = None
    for i in np.flatnonzero(ok).tolist():
        start = (ax[i], ay[i])
        if last_end is None or abs(start[0] - last_end[0]) > 1e-6 or abs(start[1] - last_end[1]) > 1e-6:
            parts.append(f"M{start[0]:.2f},{start[1]:.2f}")
        parts.append(f"L{bx[i]:.2f},{by[i]:.2f}")
        last_end = (bx[i], by[i])
    return "".join(parts)


def _color(qcolor) -> tuple[str, float]:
    return qcolor.name(), qcolor.alphaF()


def plot_layers(plot) -> str:
    """The SVG group of the curves, decade lines and NaN marks of ``plot`` (a ui.loss_plot.LossPlot), in the
    pixel coordinates of its plot widget, clipped to the plot area."""
    widget = plot.plot_widget
    vb = plot.plot.getViewBox()
    area = widget.viewportTransform().mapRect(vb.mapRectToScene(vb.boundingRect()))
    rect = (area.left(), area.top(), area.right(), area.bottom())
    (vx0, vx1), (vy0, vy1) = vb.viewRange()

    def to_pixels(xs, ys):
        xs = np.asarray(xs, dtype=np.float64)
        ys = np.asarray(ys, dtype=np.float64)
        px = rect[0] + (xs - vx0) / (vx1 - vx0) * (rect[2] - rect[0])
        py = rect[3] - (ys - vy0) / (vy1 - vy0) * (rect[3] - rect[1])
        return px, py

    out = ['<g id="curves" clip-path="url(#plot-area)" fill="none" stroke-linejoin="round" stroke-linecap="butt">',
           f'<clipPath id="plot-area"><rect x="{rect[0]:.2f}" y="{rect[1]:.2f}" width="{rect[2] - rect[0]:.2f}" '
           f'height="{rect[3] - rect[1]:.2f}"/></clipPath>']
    if plot.log_y.isChecked():  # the light line at each decade
        d = []
        for k in range(math.ceil(vy0), math.floor(vy1) + 1):
            _, py = to_pixels([vx0], [k])
            d.append(f"M{rect[0]:.2f},{py[0]:.2f}H{rect[2]:.2f}")
        if d:
            out.append(f'<path d="{"".join(d)}" stroke="#e4e4e4" stroke-width="1"/>')
    for s in plot.series.values():
        if not s.visible:
            continue
        for item, width in ((s.raw_item, 1), (s.smooth_item, 1)):
            xs, ys = item.getData()
            if xs is None or len(xs) < 2:
                continue
            d = clip_segments(*to_pixels(xs, ys), rect)
            if d:
                color, alpha = _color(item.opts["pen"].color())
                opacity = f' stroke-opacity="{alpha:.3f}"' if alpha < 1 else ""
                out.append(f'<path d="{d}" stroke="{color}"{opacity} stroke-width="{width}"/>')
        marks = s.nan_item.getData()
        if marks[0] is not None and len(marks[0]):
            px, py = to_pixels(*marks)
            d = "".join(f"M{a - 5:.2f},{b - 5:.2f}l10,10M{a - 5:.2f},{b + 5:.2f}l10,-10"
                        for a, b in zip(px.tolist(), py.tolist())
                        if rect[0] <= a <= rect[2] and rect[1] <= b <= rect[3])
            if d:
                out.append(f'<path d="{d}" stroke="#d62728" stroke-width="2"/>')
    out.append("</g>")
    return "\n".join(out)


def compose(qt_svg: str, layers: str) -> str:
    """Qt's picture (frame, axes, labels, legend) with ``layers`` drawn just above its background, so the axes
    and the legend stay on top of the curves as in the app."""
    background = qt_svg.find('<rect x="-1" y="-1"')
    after = qt_svg.find("</g>", background) if background >= 0 else -1
    if after < 0:  # not the layout this was written against: on top of everything, still right
        end = qt_svg.rfind("</svg>")
        return qt_svg[:end] + layers + "\n" + qt_svg[end:]
    after += len("</g>")
    return qt_svg[:after] + "\n" + layers + qt_svg[after:]


def hidden_for_qt(plot):
    """The plot items this module writes itself, to hide while Qt draws the rest."""
    items = [plot.decade_lines]
    for s in plot.series.values():
        items += [s.raw_item, s.smooth_item, s.nan_item]
    return items

