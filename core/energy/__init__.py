"""Energy and power: board power from the step's roofline utilization, energy per output token, the
energy bill (``power``), as JSON, text and a document section (``report``)."""

__all__ = [
    "power",  # EnergyInputs, utilization, board_power, Energy, energy_of
    "report",  # energy_dict, energy_line, energy_section
]
