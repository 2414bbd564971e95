"""The URL and the session: every dial's URL name and parser, the shared sidebar and the View every page
reads, custom chips and models in a link."""
