"""The ``tooldisc`` command line: thin glue over the library."""
