"""Apply a calibration to the session: it becomes the sidebar's efficiency and overhead settings,
which live in the URL, so a calibrated view can be shared like any other."""

from __future__ import annotations

import streamlit as st

from core.spec import units
from core.validation.calibrate import Calibration
from ui import defaults


def apply_calibration(calibration: Calibration, memory: bool = True) -> None:
    """A button callback: runs before the sidebar's widgets, so it may set their values. Only what the
    calibration fitted changes: a benchmark's fit (``memory`` False) leaves the overhead as it is.
    Core refuses a fit outside the inputs' ranges, so each value set here is one its input takes."""
    if calibration.compute:
        defaults.assign("eff_compute", round(calibration.compute, 2))
    if calibration.bandwidth:
        defaults.assign("eff_bw", round(calibration.bandwidth, 2))
    if memory:
        st.session_state["overhead_fix"] = round(calibration.overhead_correction_bytes / units.GiB, 2)
