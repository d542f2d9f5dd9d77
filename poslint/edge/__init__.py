"""What users touch: the command line, verify's command line and output formats."""
