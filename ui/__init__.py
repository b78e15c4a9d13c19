"""Streamlit-side helpers shared by app.py and the page scripts: language, sidebar, charts.

Nothing here computes a quantity; numbers come from ``core``.
"""
