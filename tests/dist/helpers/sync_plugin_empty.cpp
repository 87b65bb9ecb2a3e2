// A shared library that is not a strategy plugin: it exports no ddl_register_strategies(),
// for test_sync_registry's "missing function" case.
extern "C" int ddl_not_a_plugin() { return 0; }
