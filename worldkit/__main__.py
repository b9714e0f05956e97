from worldkit._cli.main import main

main()
