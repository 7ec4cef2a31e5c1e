from vaultkit.cli import console

console()
