"""FFT of token sequences: a synthetic periodic sequence peaks at the right frequency."""
from __future__ import annotations

import numpy as np
import pytest

from resolver.probe.fft import FFT_BINS, FREQUENCIES, dominant_frequency, mean_spectrum, token_spectrum
from resolver.probe.tokenizers import ByteTokenizer, render_prompt


@pytest.mark.parametrize("period, length", [(8, 4000), (5, 160), (12, 3600), (4, 64)])
def test_periodic_sequence_peaks_at_one_over_period(period, length):
    rng = np.random.default_rng(period)
    unit = rng.integers(100, 30000, period)            # one "table row" of token ids
    ids = np.tile(unit, length // period)
    peak = dominant_frequency(token_spectrum(ids))
    grid_step = 0.5 / (FFT_BINS - 1)
    # the fundamental or one of its harmonics k/period carries the most energy
    harmonics = [k / period for k in range(1, period // 2 + 1)]
    assert min(abs(peak - h) for h in harmonics) <= grid_step
    # and the fundamental itself stands far above the noise-free floor between harmonics
    spectrum = token_spectrum(ids)
    fundamental = spectrum[np.argmin(np.abs(FREQUENCIES - 1 / period))]
    between = spectrum[np.argmin(np.abs(FREQUENCIES - 0.5 / period))]
    assert fundamental > 10 * max(between, 1e-9)


def test_pure_sinusoid_amplitude_and_frequency():
    n = np.arange(2048)
    ids = 1000 + 50 * np.cos(2 * np.pi * n / 16)
    spectrum = token_spectrum(ids)
    assert dominant_frequency(spectrum) == pytest.approx(1 / 16, abs=0.5 / (FFT_BINS - 1))
    assert spectrum.max() == pytest.approx(25.0, rel=0.01)  # |X| / N = amplitude / 2
    # numpy's own transform of the same signal agrees on where the peak is
    reference = np.fft.rfftfreq(n.size)[np.argmax(np.abs(np.fft.rfft(ids - ids.mean())))]
    assert reference == pytest.approx(1 / 16)


def test_random_sequence_has_no_dominant_peak():
    ids = np.random.default_rng(0).integers(0, 50000, 4096)
    spectrum = token_spectrum(ids)
    assert spectrum[1:].max() < 4 * np.median(spectrum[1:])


def test_mean_spectrum_of_mixed_lengths_and_empty():
    spectra = mean_spectrum([np.tile([1, 9], 50), np.tile([1, 9], 500)])
    assert dominant_frequency(spectra) == pytest.approx(0.5)
    assert not mean_spectrum([]).any()


def test_byte_tokenizer_renders_and_encodes_prompts():
    tok = ByteTokenizer()
    text = render_prompt([{"role": "system", "content": "sys"}, {"role": "user", "content": "héllo"}], tok)
    assert text == "sys\n\nhéllo"
    assert tok.encode("hé") == [104, 0xC3, 0xA9]
