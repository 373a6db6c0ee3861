"""Reports: one self-contained HTML page (and optional PNG/SVG figures) for a run, a campaign or an ATen sweep.

Every report is a view of the store, rebuilt from scratch each time it is rendered, so rendering one while a
search is writing shows the state so far. Plotly draws every figure; its JavaScript bundle is inlined once per
page so the file opens offline. Modules: ``*_data`` gather from the store, ``*_view`` build figures and tables,
``page`` assembles the HTML, ``images`` exports figures, ``build`` ties a target to its views.
"""
