#include <Python.h>

/* An embedded interpreter, for the tests that run user code under any `__main__` (issue 35):
   argv[1] is the Python executable whose environment it takes (a venv's pyvenv.cfg is found next
   to it), argv[2] the code it runs in `__main__`, which has neither file nor spec. Compiled by
   tests/support/embedded_python.py. */
int main(int argc, char **argv) {
    if (argc != 3) return 2;
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, argv[1]);
    if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) Py_ExitStatusException(status);
    int failed = PyRun_SimpleString(argv[2]);
    if (Py_FinalizeEx() < 0) return 120;
    return failed ? 1 : 0;
}
