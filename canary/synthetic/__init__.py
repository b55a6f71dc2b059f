"""Synthetic telemetry with a known verdict (``canary synth``), and the interleaving power simulator.

One module per profile: :mod:`.events` (A/B request events), :mod:`.shadow` (shadow
reports), :mod:`.interleaving` (interleaved requests); :mod:`.power` simulates how many
requests an interleaving or an A/B verdict needs.
"""
