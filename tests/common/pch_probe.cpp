// Compiled with a test object's flags and without the precompiled header: make_pch.py
// builds tests/common/test_pch.h with this file's command line from compile_commands.json.
