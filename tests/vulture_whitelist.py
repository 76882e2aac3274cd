"""Names vulture reports as unused that something outside our code reads (tests/test_dead_code.py).

vulture goes by names: an attribute written here counts as read. Each group says who reads it.
Decorators and names the frameworks call are in pyproject.toml's [tool.vulture].
"""
# ruff: noqa: B018, F821

# SamplerFile's fields: the runner sends every field a sampler file sets (model_dump), by its name
_.temperature
_.top_p
_.presence_penalty
_.frequency_penalty
_.logprobs
_.top_logprobs
_.logit_bias
_.reasoning_effort
_.response_format
_.top_k
_.min_p
_.repetition_penalty
_.chat_template_kwargs
_.min_tokens
_.skip_special_tokens
_.spaces_between_special_tokens
_.include_stop_str_in_output
_.ignore_eos
_.typical_p
_.top_a
_.length_penalty
_.stop_token_ids

# Record and RunMetadata fields: written to every NDJSON record / metadata.json, read by evaluate.py
_.normalized_answer
_.extracted_answer
_.is_correct
_.is_truncated
_.grader_version
_.metadata_version

# The context-manager and signal-handler protocols pass these whether or not they are used
_.tb
_.signum

# Attributes a library reads once we set them: tarfile (copybufsize, linkname, pax_headers),
# tokenizers (pre_tokenizer), Dash AG Grid (rowData, columnDefs), selenium (binary_location)
_.copybufsize
_.linkname
_.pax_headers
_.pre_tokenizer
_.rowData
_.columnDefs
_.binary_location

# The ReasonScore interval's note: docstrings (resolver.stats, resolver.analysis.scores) point at it by name
_.REASONSCORE_INTERVAL

# Fixtures a test requests for their effect only (pytest starts them by parameter name)
_.dead_hub
_.browser_ready


# Python reads sys.unraisablehook when a finaliser raises (resolver/ingest/pipeline.py, a worker's stop)
_.unraisablehook

# random.Random.gauss reads the second normal it keeps (tests/test_sim_agreement.py's Replay clears it per answer)
_.gauss_next
