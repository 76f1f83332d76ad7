"""python -m pyscan check: every algorithm of every registry against NumPy, in worker processes, and with
--sanitize under compute-sanitizer's tools.  cases.py makes the cases from pyscan_tools.patterns; exercise.py
runs them in one process; workers.py spreads them over processes; sanitizer.py runs and reads
compute-sanitizer; report.py prints the summary; cli.py is the command."""
