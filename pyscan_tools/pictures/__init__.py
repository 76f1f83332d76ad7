"""Pictures of the patterns: the step-models and GPU traces drawn (`visual`), and the books' races run and counted
(`races`).  Tools beside the library: they use pyscan's public functions, models and traces."""
