from tooldisc.cli.app import main

main()
