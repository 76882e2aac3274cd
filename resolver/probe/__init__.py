"""probe.py computations: raw-trace forensics for chosen points (fft, failure, truncation).

Every function here returns plain data (DataFrames, dicts, dataclasses); rendering
lives in resolver/probe/render.py and resolver/plots/.
"""
