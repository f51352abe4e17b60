"""The secrets of docker-compose.yaml: made on the first start of an install, kept in the
`airflow-config` volume, read by every Airflow container; never a value that is the same on every
install, unless the environment sets one.

    python compose_secrets.py init DIR          # airflow-init, every `up`: write DIR's secrets
    python compose_secrets.py exec DIR CMD...   # the cli service: CMD with the admin password set

`init` writes, for each secret, the value the environment sets (so a changed value takes effect on
the next `up`), or else keeps the file already there, or else generates one:

| file in DIR                            | environment                 | generated                | read by Airflow through         |
|----------------------------------------|-----------------------------|--------------------------|---------------------------------|
| secrets/fernet_key                     | ALTERFLOW_FERNET_KEY        | Fernet.generate_key()    | AIRFLOW__CORE__FERNET_KEY_CMD   |
| secrets/jwt_secret                     | ALTERFLOW_JWT_SECRET        | 32 random bytes, base64  | AIRFLOW__API_AUTH__JWT_SECRET_CMD |
| secrets/api_secret_key                 | ALTERFLOW_API_SECRET_KEY    | 32 random bytes, base64  | AIRFLOW__API__SECRET_KEY_CMD    |
| simple_auth_manager_passwords.json     | ALTERFLOW_AIRFLOW_PASSWORD  | 16 random characters     | SimpleAuthManager's passwords file |

Files are written without a trailing newline (a `_CMD`'s output is taken as it is), mode 0600;
airflow-init then gives them to AIRFLOW_UID. Nothing is printed but where the files are.

`exec` sets ALTERFLOW_AIRFLOW_PASSWORD (when the environment does not) from the passwords file,
then replaces itself with CMD: the CLI signs in to the api-server with the install's password.
"""

from __future__ import annotations

import base64
import json
import os
import pathlib
import secrets
import sys

ADMIN_USER = "admin"
PASSWORDS_FILE = "simple_auth_manager_passwords.json"
# file under DIR -> the environment variable that sets it
KEYS = {
    "secrets/fernet_key": "ALTERFLOW_FERNET_KEY",
    "secrets/jwt_secret": "ALTERFLOW_JWT_SECRET",
    "secrets/api_secret_key": "ALTERFLOW_API_SECRET_KEY",
}


def _fernet_key() -> str:
    # Fernet.generate_key() without importing cryptography: 32 random bytes, URL-safe base64.
    return base64.urlsafe_b64encode(os.urandom(32)).decode()


def _random_key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


GENERATORS = {"secrets/fernet_key": _fernet_key, "secrets/jwt_secret": _random_key, "secrets/api_secret_key": _random_key}


def check_fernet_key(value: str) -> None:
    """What Airflow accepts as fernet_key: one key, or several separated by commas (rotation)."""
    for key in value.split(","):
        try:
            raw = base64.urlsafe_b64decode(key.strip().encode())
        except (ValueError, TypeError):
            raw = b""
        if len(raw) != 32:
            raise SystemExit(
                "error: ALTERFLOW_FERNET_KEY is not a Fernet key (32 bytes, URL-safe base64), nor a comma-separated list of them"
            )


def _write(path: pathlib.Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(partial, 0o600)
    os.replace(partial, path)


def init(directory: pathlib.Path, env: dict[str, str]) -> list[str]:
    """Write DIR's secrets (see the module's docstring); the lines to print about them."""
    lines = []
    (directory / "secrets").mkdir(parents=True, exist_ok=True)
    os.chmod(directory / "secrets", 0o700)
    for name, variable in KEYS.items():
        path = directory / name
        value = env.get(variable, "")
        if value:
            if variable == "ALTERFLOW_FERNET_KEY":
                check_fernet_key(value)
            _write(path, value)
            lines.append(f"{name}: from {variable}")
        elif path.exists() and path.read_text():
            os.chmod(path, 0o600)
            lines.append(f"{name}: kept")
        else:
            _write(path, GENERATORS[name]())
            lines.append(f"{name}: generated")
    path = directory / PASSWORDS_FILE
    password = env.get("ALTERFLOW_AIRFLOW_PASSWORD", "")
    try:
        passwords = json.loads(path.read_text()) if path.exists() else {}
    except ValueError:
        passwords = {}
    if password:
        how = "from ALTERFLOW_AIRFLOW_PASSWORD"
    elif isinstance(passwords, dict) and passwords.get(ADMIN_USER):
        password, how = passwords[ADMIN_USER], "kept"
    else:
        password, how = secrets.token_urlsafe(12), "generated"
    _write(path, json.dumps({ADMIN_USER: password}))
    lines.append(f"{PASSWORDS_FILE}: {how} (the password of user {ADMIN_USER})")
    return lines


def admin_password(directory: pathlib.Path) -> str:
    return json.loads((directory / PASSWORDS_FILE).read_text())[ADMIN_USER]


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "init":
        directory = pathlib.Path(argv[1])
        for line in init(directory, dict(os.environ)):
            print(f"compose_secrets: {directory}/{line}", flush=True)
        return 0
    if len(argv) >= 3 and argv[0] == "exec":
        if not os.environ.get("ALTERFLOW_AIRFLOW_PASSWORD"):
            os.environ["ALTERFLOW_AIRFLOW_PASSWORD"] = admin_password(pathlib.Path(argv[1]))
        os.execvp(argv[2], argv[2:])
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
