"""Generated training data for model-free update detection (issue 35).

Sentences are built from slot types x paraphrase frames x values x subjects, each token tagged
with what it is to the fact:

- ``S``: the subject the fact is about (a person, a team, a service);
- ``A``: the aspect within the slot (the counted noun, the favourite *what*, the dependency
  whose version it is, the limit's measure);
- ``V``: the value the fact states now;
- ``X``: a value the fact says is over ("left **Shopify**", "switched from **Okta**");
- ``O``: anything else.

Each sentence also carries its slot (or ``none``) and whether it ends a fact ("I don't play
tennis anymore", "we separated"). ``scripts/train_infer.py`` fits the classifiers on them.

The frames and values were written for this generator; none is taken from the hand-written
evaluation dialogues (``scripts/lab/data/infer/``), which it must never see.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

#: tokens as the tagger reads them (``localmem.infer.tagger`` uses the same pattern)
TOKEN = re.compile(r"\w+(?:[.'’:/-]\w+)*|[^\w\s]")

SLOTS = (
    "home",
    "employer",
    "role",
    "partner",
    "diet",
    "allergy",
    "team",
    "manager",
    "age",
    "count",
    "preference",
    "hobby",
    "habit",
    "education",
    "version",
    "owner",
    "schedule",
    "limit",
    "host",
    "tool",
    "none",
)
#: slots that hold several values at once: only an ending that names one ends it
MULTI_VALUED = ("allergy", "hobby", "habit")
#: slots that hold one value at a time: a new value ends the old one
SINGLE_VALUED = tuple(s for s in SLOTS if s not in (*MULTI_VALUED, "none"))


def _l(text: str) -> list[str]:
    return [" ".join(p.split()) for p in text.split("|") if p.strip()]


NAMES = _l(
    """Aiko|Bram|Chiara|Dmitri|Esme|Faisal|Greta|Hamid|Isla|Jonah|Keiko|Lars|Mireille|Nkechi|
Oren|Paula|Rashid|Saoirse|Teodor|Ulla|Vasco|Wiebke|Ximena|Yusuf|Zofia|Amadou|Beatriz|Callum|
Dalia|Emre|Fenna|Gideon|Hedda|Idris|Jurgen|Kalani|Leonie|Matteo|Nour|Olamide|Pilar|Quentin|
Rhiannon|Stellan|Tamsin|Ugne|Valentin|Wairimu|Xiang|Yelena|Zainab|Arjun|Brigid|Cosmin|Delphine|
Eamon|Freya|Gaspard|Hira|Ilse|Joaquin|Kwame|Lorna|Magnus|Nilufar|Orla|Pradeep|Renske|Sunniva|
Thiago|Ulrike|Vikram|Wendell|Yara|Zeynep|Alba|Bongani|Cyrus|Dunja|Elodie|Florin|Gulnara|Hector|
Ingrid|Jasper|Katya|Luca|Marisol|Niamh|Osvaldo|Petra|Radek|Selin|Tobias|Annika|Marcel|Sven"""
)
RELATIONS = _l(
    """sister|brother|mum|dad|mother|father|son|daughter|husband|wife|partner|boyfriend|
girlfriend|cousin|aunt|uncle|grandma|grandpa|neighbour|flatmate|best friend|boss|colleague|
niece|nephew|stepdad|mother-in-law|twin"""
)
CITIES = _l(
    """Utrecht|Gdansk|Valparaiso|Nagoya|Winnipeg|Hobart|Tampere|Lyon|Brno|Ljubljana|Aarhus|
Halifax|Cusco|Mombasa|Chiang Mai|Trieste|Galway|Aberdeen|Malmo|Sapporo|Busan|Ghent|Zaragoza|
Bologna|Antalya|Izmir|Pune|Kochi|Curitiba|Rosario|Salta|Oaxaca|Puebla|Tucson|Boise|Asheville|
Duluth|Spokane|Quebec City|Victoria|Dunedin|Wellington|Adelaide|Darwin|Durban|Kampala|Arusha|
Tangier|Fez|Sfax|Haifa|Tartu|Vilnius|Kaunas|Lodz|Poznan|Leipzig|Dresden|Freiburg|Graz|
Innsbruck|Lausanne|Lugano|Nantes|Rennes|Bilbao|Cadiz|Faro|Braga|Coimbra|Split|Zadar|Varna|
Plovdiv|Cluj|Timisoara|Novi Sad|Skopje|Shkoder|Brighton|Norwich|Exeter|Swansea|Derry|Inverness|
the suburbs|the countryside|a village near Bath|a houseboat in Utrecht|the old town|downtown"""
)
COMPANIES = _l(
    """Zalando|Siemens|Philips|Unilever|Ericsson|Spotify|Klarna|Adyen|Booking.com|Atlassian|
Canva|Shopify|Wise|Monzo|Revolut|Deliveroo|Ocado|Rolls-Royce|Airbus|Bosch|Volvo|Maersk|Novo
Nordisk|Lego|Ikea|Nestle|Roche|Novartis|Accenture|Capgemini|Deloitte|KPMG|the council|the NHS|
a small bakery|a law firm|a startup called Tiltwave|a design agency|the local hospital|the
university|a bike shop|a vineyard|a logistics company|a bank in the City|an insurance company|
the public library|a school in town|a game studio|a nonprofit|Datadog|Stripe|GitLab|Mozilla|
Red Hat|Canonical|Grafana Labs|Elastic|MongoDB|Cloudflare|Fastly|Twilio|Zendesk|HubSpot"""
)
ROLES = _l(
    """nurse|paramedic|teacher|lecturer|accountant|architect|plumber|electrician|chef|barista|
pharmacist|dentist|vet|translator|journalist|photographer|graphic designer|product manager|
software engineer|data scientist|site reliability engineer|QA engineer|team lead|engineering
manager|staff engineer|principal engineer|junior developer|senior developer|intern|CTO|
head of marketing|sales rep|recruiter|paralegal|solicitor|carpenter|gardener|librarian|
social worker|physiotherapist|midwife|firefighter|police officer|pilot|flight attendant|
bus driver|postdoc|PhD student|research assistant|professor|tutor|consultant|freelancer"""
)
PARTNERS = NAMES
DIETS = _l(
    """vegan|vegetarian|pescatarian|keto|paleo|gluten-free|dairy-free|low-carb|flexitarian|
halal|kosher|on the Mediterranean diet|eating meat again|eating everything|plant-based|raw vegan"""
)
ALLERGENS = _l(
    """peanuts|tree nuts|shellfish|eggs|milk|soy|wheat|sesame|bees|wasps|latex|penicillin|
dust mites|pollen|cats|dogs|horses|mould|kiwi|strawberries"""
)
TEAMS = _l(
    """platform team|payments team|mobile team|data team|growth team|infra team|security team|
search team|billing team|checkout team|design team|support team|ML team|frontend team|backend
team|SRE team|identity team|ads team|analytics team|onboarding team|sales team|finance team|
research team|QA team|devrel team|core team|API team|risk team|logistics team|content team"""
)
COUNT_NOUNS = _l(
    """cats|dogs|kids|children|grandchildren|bikes|cars|plants|chickens|goldfish|guitars|
languages|rabbits|horses|tattoos|siblings|flatmates|houses|employees|engineers|servers|
replicas|regions|shards|nodes|microservices|customers|stores|offices|direct reports"""
)
NUMBERS = _l(
    """one|two|three|four|five|six|seven|eight|nine|ten|twelve|2|3|4|5|6|7|8|9|11|14|15|20|
25|40|50|120"""
)
FAVOURITE_OF = _l(
    """colour|food|band|film|book|season|drink|city|sport|song|game|flower|cheese|dessert|
holiday spot|podcast|painter|author|tea|beer|wine|coffee shop|restaurant|TV show|composer"""
)
FAVOURITES = _l(
    """blue|green|orange|purple|red|yellow|teal|pizza|ramen|paella|dumplings|curry|pho|
lasagne|the Beatles|Fleetwood Mac|Bjork|Kraftwerk|Arcade Fire|Casablanca|Spirited Away|
Amelie|The Hobbit|Middlemarch|Beloved|winter|summer|spring|autumn|mint tea|espresso|cider|
lemonade|Kyoto|Lisbon|rugby|cricket|basketball|chess|Catan|tulips|sunflowers|brie|gouda|
tiramisu|cheesecake|Monet|Frida Kahlo|Murakami|Le Guin|Bach|Chopin|Earl Grey|stout|Rioja"""
)
PREFERENCES = [
    ("seat", _l("window seat|aisle seat|seat near the front|exit row|middle seat")),
    ("coffee", _l("with oat milk|black|with two sugars|as a flat white|decaf|with cream")),
    ("tea", _l("with lemon|with milk and honey|green|strong with no sugar|iced")),
    ("phone", _l("an iPhone|a Pixel|a Samsung|a Fairphone|an old Nokia|a OnePlus")),
    ("car", _l("a Tesla|an old Volvo|a Fiat Panda|a Prius|a campervan|a Mini|a Skoda")),
    ("editor", _l("Vim|Emacs|VS Code|IntelliJ|Sublime Text|Neovim|Helix|Zed|PyCharm")),
    ("commute", _l("by train|by bike|on foot|by bus|by car|by ferry|on the metro|by scooter")),
    ("shell", _l("zsh|bash|fish|PowerShell|nushell")),
    ("browser", _l("Firefox|Chrome|Safari|Brave|Arc|Edge")),
    ("laptop", _l("a MacBook|a ThinkPad|a Framework|a Dell XPS|a Surface")),
]
HOBBIES = _l(
    """tennis|squash|badminton|chess|the violin|the cello|the piano|the drums|the guitar|
football|volleyball|golf|rock climbing|bouldering|running|cycling|swimming|rowing|yoga|pilates|
karate|judo|fencing|knitting|pottery|painting|birdwatching|baking|gardening|woodworking|
photography|surfing|skiing|hiking|dancing salsa|board games|crosswords|sudoku|poker"""
)
HABITS = _l(
    """smoking|vaping|drinking coffee|drinking alcohol|eating meat|the gym membership|
the Netflix subscription|the allotment|the night shifts|the choir|the book club|the running
club|the five-a-side team|the evening classes|the Spanish course|therapy|the weekly poker game"""
)
SCHOOLS = _l(
    """year 2|year 4|year 7|year 9|sixth form|primary school|secondary school|first grade|
third grade|fifth grade|high school|college|a master's in physics|a nursing degree|
an MBA|a coding bootcamp|a PhD in linguistics|an apprenticeship|night school|the Open University"""
)
COMPONENTS = _l(
    """billing|checkout|the search service|the auth service|the frontend|the admin panel|
the data pipeline|the mobile app|the API gateway|the payment webhook|the recommender|
the reporting job|our CI|the build|the docs site|the status page|the notification service|
the inventory service|the ledger|the login flow|the session store|the events bus|prod|staging|
the main database|the analytics warehouse|the ML platform|the scheduler|the crawler|
the image resizer|the email worker|the public API|the partner API|the website|the blog|
the intranet|the HR system|the booking system|the warehouse app|the kiosk software"""
)
DEPENDENCIES = [
    ("PostgreSQL", _l("11|12|13|14|15|16|17")),
    ("MySQL", _l("5.7|8.0|8.4")),
    ("Redis", _l("5|6|6.2|7|7.2")),
    ("Python", _l("3.8|3.9|3.10|3.11|3.12|3.13")),
    ("Node", _l("14|16|18|20|22")),
    ("Java", _l("8|11|17|21")),
    ("Go", _l("1.19|1.20|1.21|1.22")),
    ("Kubernetes", _l("1.24|1.25|1.26|1.27|1.28|1.29")),
    ("Django", _l("3.2|4.1|4.2|5.0")),
    ("React", _l("16|17|18|19")),
    ("Rails", _l("6.1|7.0|7.1")),
    ("Kafka", _l("2.8|3.4|3.6")),
    ("Elasticsearch", _l("7.10|7.17|8.11")),
    ("Ubuntu", _l("18.04|20.04|22.04|24.04")),
    ("Debian", _l("10|11|12")),
    ("Spring Boot", _l("2.7|3.1|3.2")),
    ("Terraform", _l("0.14|1.3|1.5|1.7")),
    ("Envoy", _l("1.24|1.27|1.29")),
    ("Angular", _l("12|15|17")),
    ("PHP", _l("7.4|8.1|8.3")),
]
OWNERS = NAMES + _l(
    """the platform team|the identity team|the data team|the SRE team|the payments team|
the vendor|the contractor|support|the infra folks|the on-call engineer|the core team"""
)
OWNED = _l(
    """the on-call rotation|the release process|the billing dashboards|the alerting rules|
the incident reviews|the weekly report|the migration|the Kafka cluster|the design system|
the onboarding docs|the security review|the budget spreadsheet|the hiring pipeline|
the customer escalations|the deploy pipeline|the status page|the roadmap|the quarterly planning|
the runbook|the audit|the team newsletter|the interview loop|ticket OPS-311|ticket WEB-88|
the flaky-test triage|the vendor contract|the office move|the backups|the staging cluster"""
)
EVENTS = _l(
    """standup|the nightly backup|the deploy|releases|the retro|sprint planning|the batch import|
the cron job|the all-hands|on-call handover|the data refresh|the report email|the cleanup job|
the cache warmup|the billing run|office hours|the team lunch|the demo|code freeze|the 1:1s"""
)
WHENS = _l(
    """every Monday|every Tuesday|on Wednesdays|on Thursdays|every Friday|at 9:30|at 10:15|
at 2am UTC|at 4am|at midnight|at noon|twice a week|every two weeks|once a month|daily|hourly|
every six hours|on the first of the month|on Tuesday mornings|after lunch on Fridays|
every other Thursday|weekly|at 8pm|at 6am|two weeks long|one week|three weeks|
from 9 to 5|around the clock|24/7|Monday to Friday|on weekends only|in the mornings"""
)
LIMITS = [
    (
        "rate limit",
        _l("100 requests per minute|300 requests per minute|50 per second|1000 per hour"),
    ),
    ("timeout", _l("5 seconds|10 seconds|30 seconds|2 minutes|90 seconds")),
    ("upload limit", _l("10 MB|25 MB|100 MB|2 GB|500 MB")),
    ("budget", _l("10k a month|15k a month|20k a month|40k a quarter|2k a week")),
    ("log retention", _l("7 days|14 days|30 days|90 days|365 days")),
    ("quota", _l("4 GPUs|8 GPUs|16 GPUs|2 TB|500 GB")),
    ("price", _l("9 euros a month|12 euros a month|15 dollars|29 dollars a seat|99 pounds")),
    ("max connections", _l("100|200|500|1000")),
    ("batch size", _l("32|64|256|1000 rows")),
    ("memory limit", _l("512 MB|1 GB|2 GB|4 GB|8 GB")),
    ("headcount", _l("6 people|10 people|14 people|25 people")),
    ("salary", _l("40k|48k|55k|62k|80k")),
    ("dose", _l("10 mg|20 mg|30 mg|50 mg|100 mg")),
    ("SLA", _l("99.5%|99.9%|99.95%|four hours|one business day")),
]
HOSTS = _l(
    """AWS|GCP|Azure|Hetzner|OVH|DigitalOcean|Fly.io|Heroku|Vercel|Netlify|our own racks|
a VM in the Frankfurt data centre|a Mac mini in the office|a Raspberry Pi|eu-west-1|us-east-1|
eu-central-1|ap-southeast-2|the Dublin region|on-prem|a colo in Amsterdam|Cloudflare Workers|
bare metal in Helsinki|the old VMware cluster|Kubernetes in Oregon|the London office|
12 Harbour Street|the third floor|a co-working space in Leith|Dublin|Amsterdam|Singapore"""
)
TOOLS = [
    ("CI", _l("Jenkins|GitHub Actions|GitLab CI|CircleCI|Buildkite|Travis|Drone")),
    ("metrics", _l("Prometheus|Graphite|Datadog|InfluxDB|New Relic|CloudWatch")),
    ("logging", _l("Splunk|Loki|the ELK stack|Papertrail|Graylog")),
    ("login", _l("Okta|Azure AD|Auth0|Keycloak|Google SSO|LDAP")),
    ("shipping", _l("DHL|UPS|FedEx|DPD|Royal Mail|PostNL")),
    ("ticketing", _l("Jira|Linear|GitHub Issues|Trello|Asana|YouTrack")),
    ("chat", _l("Slack|Teams|Mattermost|Discord|Zulip")),
    ("payments", _l("Stripe|Adyen|PayPal|Braintree|Mollie")),
    ("database", _l("MySQL|Postgres|ClickHouse|BigQuery|Snowflake|MongoDB|DynamoDB")),
    ("framework", _l("Angular|React|Vue|Svelte|Django|Flask|Rails|Laravel")),
    ("email", _l("SendGrid|Mailgun|Postmark|SES")),
    ("backups", _l("S3|Backblaze|Glacier|a NAS in the office|Tarsnap")),
    ("analytics", _l("Google Analytics|Plausible|Matomo|Amplitude|Mixpanel")),
]
TIMES = _l(
    """last week|last month|in March|in the spring|over the summer|this year|yesterday|
a few weeks ago|recently|in January|after the holidays|over the weekend|this morning|
on Friday|since the reorg|from today|as of Monday|two days ago|at the end of last year"""
)
FILLERS = _l(
    """honestly|to be fair|by the way|funnily enough|long story short|as it turns out|
believe it or not|for what it's worth|anyway|so yeah|fun fact|quick update|heads up|
big news|good news|in other news|not gonna lie|small thing"""
)
TAILS = _l(
    """it's been great|long story|finally|what a year|can't complain|fingers crossed|
more on that later|no regrets|we'll see how it goes|it was about time|still getting used to it|
it's a big change|it feels weird|so much better|everyone is happy about it|for now at least"""
)


#: what often follows a value in speech ("moved to Osaka for work")
AFTER = _l(
    """for work|with the kids|near the park|in the end|after the holidays|for the weather|to be
near family|and we love it|which is great|so that's that|for now|with two friends|in an old
house|by the sea|since the spring|at least for a while|for the commute|because of the rent|
every day|no contest|all the blossom|it's so much calmer|mostly on weekends|for a while now|
on the third floor|in the new building|across the street|for personal reasons"""
)
#: how a turn often starts
BEFORE = _l("No|Yes|Well|Honestly|So|Oh|Actually|Right|Okay|Ha|Yep|Nope|Update")


@dataclass(frozen=True)
class Example:
    """One generated sentence: its tokens, their tags, its slot and whether it ends a fact."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    slot: str
    ending: bool

    @property
    def text(self) -> str:
        return detokenise(self.tokens)


def detokenise(tokens: tuple[str, ...] | list[str]) -> str:
    out = ""
    for t in tokens:
        if (out and not re.match(r"[^\w\s]", t)) or t in "(":
            out += " "
        out += t
    return out.strip()


# -- subjects ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Subject:
    """A subject as the frames need it: the name, a possessive, its grammatical person."""

    text: str
    possessive: str
    person: str  # "1s" (I), "1p" (we), "3s", "3p"


def person_subject(rng: random.Random) -> Subject:
    r = rng.random()
    if r < 0.55:
        name = rng.choice(NAMES)
        return Subject(name, f"{name}'s", "3s")
    if r < 0.7:
        return Subject("I", "my", "1s")
    if r < 0.78:
        return Subject("we", "our", "1p")
    owner = rng.choice(["my", f"{rng.choice(NAMES)}'s", "our", "his", "her"])
    rel = rng.choice(RELATIONS)
    return Subject(f"{owner} {rel}", f"{owner} {rel}'s", "3s")


def thing_subject(rng: random.Random) -> Subject:
    c = rng.choice(COMPONENTS)
    return Subject(c, f"{c}'s", "3s")


_AGREE = {
    "1s": {"s": "", "es": "", "be": "am", "have": "have", "was": "was", "do": "do", "ies": "y"},
    "1p": {"s": "", "es": "", "be": "are", "have": "have", "was": "were", "do": "do", "ies": "y"},
    "3s": {
        "s": "s",
        "es": "es",
        "be": "is",
        "have": "has",
        "was": "was",
        "do": "does",
        "ies": "ies",
    },
    "3p": {"s": "", "es": "", "be": "are", "have": "have", "was": "were", "do": "do", "ies": "y"},
}


# -- frames -----------------------------------------------------------------------------------
# {S} subject, {P} its possessive (tagged S), {V} value, {X} old value, {A} aspect, {T} a time
# phrase, {s} {es} {be} {have} {was} {do} {ies} agreement with the subject. A frame starting
# with "!" ends a fact.
FRAMES: dict[str, list[str]] = {
    "home": _l(
        """{S} {be} still in the same flat in {V}|{V} {have} been good to {M} since {T}|
the new place in {V} is great, says {S}|{S} {be} in {V} now, the house has a garden|
{S} call{s} {V} home now|
{S} {have} a house in {V} now|{S} {be} living out in {V} these days|{S} moved house to {V}|
{S} live{s} in {V}|{S} {be} living in {V} now|{S} moved to {V} {T}|{S} relocated to {V}|
{S} {have} settled in {V}|{S} {be} based in {V}|home for {M} is {V} these days|{S} bought a place
in {V}|{S} {be} renting a flat in {V}|{V} is home now for {S}|{S} finally moved into a house in {V}|
{S} just signed a lease in {V}|{S} {have} been in {V} since {T}|{S} moved from {X} to {V}|
{S} left {X} and moved to {V}|{S} packed up and went to {V}|{S} {be} in {V} now, loving it|
{S} {have} lived in {V} for years|work sent {M} to {V} for good|{S} ended up in {V} after all|
{P} new address is in {V}|{S} {be} back in {V} for good|{S} {have} just moved house, to {V}|
{S} rent{s} a room in {V}|{S} {be} staying in {V} permanently|{S} swapped {X} for {V}|
!{S} moved out of {X}|!{S} {have} left {X} for good|!{S} no longer live{s} in {X}|
!{S} sold the house in {X}"""
    ),
    "employer": _l(
        """{S} {be} a {R} at {V}|{S} {be} a {R} with {V} these days|{S} work{s} in {R} at {V}|
{S} {have} worked at {V} for ages|{S} {be} still at {V}|{S} went back to {V}|{S} {be} doing
{R} work for {V} now|{S} got hired by {V}|{S} landed a job at {V}|
{S} work{s} at {V}|{S} work{s} for {V}|{S} joined {V} {T}|{S} started at {V} {T}|
{S} got a job at {V}|{S} {be} employed by {V}|{S} {have} been at {V} for three years|
{S} took a job with {V}|{S} {be} with {V} now|{S} signed with {V}|{V} hired {M} {T}|
{S} left {X} and joined {V}|{S} switched from {X} to {V}|{S} {be} now at {V}, not {X}|
{S} moved from {X} to {V} {T}|{P} employer is {V}|{P} new job is at {V}|{S} start{s} at {V} on
Monday|{S} work{s} for {V} these days|{S} accepted an offer from {V}|{S} {have} been working at
{V} since {T}|{S} went to work for {V}|!{S} quit {X}|!{S} left {X} {T}|!{S} {have} retired|
!{S} retired {T}|!{S} got laid off from {X}|!{S} {be} no longer at {X}|!{S} went freelance|
!{S} {be} between jobs now|!{S} resigned from {X}|!{S} handed in {P} notice at {X}"""
    ),
    "role": _l(
        """{S} {be} a {V} in the same team now|{S} work{s} as {V} at a school|{S} {be} a
{V} these days|{S} {be} the {V} now|{S} got the {V} job|
{S} work{s} as a {V}|{S} {be} a {V}|{S} {be} a {V} at the hospital|{S} got promoted to {V}|
{S} {be} the new {V}|{S} became a {V} {T}|{S} retrained as a {V}|{S} {be} working as a {V} now|
{P} job title is {V}|{P} role is {V} now|{S} {have} been made {V}|{S} stepped up to {V}|
{S} went from {X} to {V}|{S} {be} a {V} now, no longer a {X}|{S} qualified as a {V} {T}|
{S} took the {V} position|{S} moved into a {V} role|!{S} {be} not a {X} anymore|
!{S} stepped down as {X}|!{S} gave up being a {X}|!{S} {be} no longer {X}"""
    ),
    "partner": _l(
        """{S} {be} married to {V}|{S} married {V} {T}|{S} {be} dating {V}|{S} {be} seeing {V}|
{S} {be} engaged to {V}|{S} got engaged to {V} {T}|{S} and {V} got married|{S} and {V} are
together|{P} partner is {V}|{P} boyfriend is {V}|{P} girlfriend is {V}|{P} husband is {V}|
{P} wife is {V}|{S} {be} in a relationship with {V}|{S} moved in with {V}|{S} {have} been with
{V} for two years|{S} started dating {V} {T}|{S} {be} single|{S} {be} happily single now|
!{S} broke up with {X}|!{S} and {X} split up|!{S} and {X} separated|!{S} divorced {X}|
!{S} and {X} called off the wedding|!{S} {be} no longer with {X}|!{S} {be} divorced now|
!{S} and {X} broke up {T}|!{S} separated from {X}"""
    ),
    "diet": _l(
        """{S} {be} {V}|{S} went {V} {T}|{S} {be} fully {V} now|{S} {have} been {V} since {T}|
{S} eat{s} {V} these days|{S} switched to a {V} diet|{S} {be} trying {V}|{S} follow{s} a {V}
diet|{S} {be} strictly {V}|{S} went from {X} to {V}|{S} {be} {V}, no more {X}|
!{S} gave up on {X}|!{S} {be} not {X} anymore|!{S} stopped being {X}|!{S} quit {X} {T}"""
    ),
    "allergy": _l(
        """{S} {be} allergic to {V}|{S} {have} an allergy to {V}|{S} can't eat {V}, allergy|
{S} found out about the {V} allergy|{S} react{s} badly to {V}|{P} allergy to {V} is serious|
{S} {have} a {V} allergy|{S} {be} also allergic to {V}|!{S} {be} not allergic to {X} anymore|
!{S} outgrew {P} {X} allergy|!{S} {be} no longer allergic to {X}|!the {X} allergy is gone"""
    ),
    "team": _l(
        """{S} {be} on the {V}|{S} support{s} the {V}|{S} joined the {V}|{S} moved to the {V}|
{S} transferred to the {V} {T}|{S} work{s} with the {V} now|{S} {be} part of the {V}|
{S} {have} been on the {V} since {T}|{S} switched from the {X} to the {V}|{S} left the {X}
for the {V}|{P} team is the {V}|{S} now sit{s} with the {V}|{S} got moved over to the {V}|
!{S} left the {X}|!{S} {be} no longer on the {X}"""
    ),
    "manager": _l(
        """{P} manager is {V}|{S} report{s} to {V}|{S} report{s} to {V} now|{V} is {P} new boss|
{S} now work{s} under {V}|{V} manages {M}|{P} line manager is {V}|{S} got a new manager, {V}|
{P} boss is {V}|{S} {be} managed by {V} since {T}|{X} left so {S} report{s} to {V} now"""
    ),
    "age": _l(
        """{S} {be} {V}|{S} {be} {V} years old|{S} turned {V} {T}|{S} turn{s} {V} today|
{S} just turned {V}|{S} {be} {V} now|{S} celebrated {P} {V}th birthday|{S} hit {V} {T}|
{V} today for {M}|{S} {be} {V} since Tuesday"""
    ),
    "count": _l(
        """{S} {have} {V} {A}|{S} {have} {V} {A} now|{S} own{s} {V} {A}|{S} {be} down to {V} {A}|
{S} {have} got {V} {A}|{S} now {have} {V} {A}|{S} keep{s} {V} {A}|there are {V} {A} in {P} house|
{S} {be} up to {V} {A}|{S} adopted another one, so {V} {A} now|{S} {have} {V} {A} in total|
{S} run{s} {V} {A}|{S} speak{s} {V} {A}|{S} added one more, {V} {A} now"""
    ),
    "preference": _l(
        """{P} favourite {A} is {V}|{V} is {P} favourite {A}|{P} favourite {A} is {V}
now|{V} {have} become {P} favourite {A}|{S} like{s} {V} best as a {A}|{V} is {P} go-to {A}|
{P} new favourite {A} is {V}|{S} {have} gone off {X}, {P} favourite {A} is {V} now|
{P} favourite {A} used to be {X} but now it's {V}|
{S} prefer{s} {V} as the {A}|for the {A}, {S} want{s} {V}|{S} always want{s} the {A}
{V}|{P} {A} is {V} now|{S} switched {P} {A} to {V}|{S} use{s} {V} for the {A}|{S} go{es} for
{V} as the {A}|the {A} for {S} is {V}|{S} changed {P} {A} to {V}|{S} {be} on {V} as the {A}
now|{S} switched from {X} to {V} as the {A}"""
    ),
    "hobby": _l(
        """{S} like{s} {V} in the morning|{S} love{s} {V} after dinner|{S} enjoy{s} {V} now and
then|{S} like{s} {V} on quiet evenings|{S} {be} a big fan of {V}|{S} like{s} {V} too|
{S} run{s} with {V}|{S} {be} part of {V}|{S} {have} been doing {V} for years|
{S} play{s} {V}|{S} play{s} {V} every weekend|{S} love{s} {V}|{S} {be} really into {V}|
{S} do{es} {V} twice a week|{S} took up {V} {T}|{S} enjoy{s} {V}|{S} like{s} {V}|
{S} {be} learning {V}|{S} started {V} {T}|{S} {be} obsessed with {V}|{S} go{es} {V} on Sundays|
!{S} {do} not play {X} anymore|!{S} stopped {X}|!{S} gave up {X}|!{S} quit {X} {T}|
!{S} {be} done with {X}|!{S} {do}n't do {X} any more|!{S} no longer enjoy{s} {X}"""
    ),
    "habit": _l(
        """{S} {be} a member at {V}|{S} {have} a membership at {V}|{S} {be} signed up
to {V}|{S} pay{s} for {V}|
{S} {be} a member of {V}|{S} signed up for {V}|{S} still {have} {V}|{S} keep{s} up
{V}|{S} go{es} to {V} every week|{S} started {V} {T}|!{S} cancelled {X}|!{S} quit {X} {T}|
!{S} {have} given up {X}|!{S} stopped {X} {T}|!{S} {do}n't do {X} anymore|!{S} dropped {X}|
!{S} {be} off {X} for good|!no more {X} for {M}"""
    ),
    "education": _l(
        """{S} {be} in {V}|{S} started {V} {T}|{S} {be} doing {V}|{S} got into {V}|{S} {be}
studying for {V}|{S} moved up to {V}|{S} {be} in {V} this year|{S} enrolled in {V}|
{S} finished {X} and started {V}|!{S} dropped out of {X}|!{S} graduated from {X}"""
    ),
    "version": _l(
        """{S} run{s} on {A} {V}|{S} {be} on {A} {V}|{S} use{s} {A} {V}|we upgraded {S} to {A} {V}
{T}|{S} {be} pinned to {A} {V}|{S} moved to {A} {V}|{S} build{s} with {A} {V}|we bumped {S} to
{A} {V}|{S} {be} still stuck on {A} {V}|{S} now require{s} {A} {V}|{S} got upgraded to {A} {V}
{T}|we migrated {S} from {A} {X} to {A} {V}|{S} went from {A} {X} to {A} {V}|
{S} {be} on {A} {V} after the upgrade|{S} target{s} {A} {V}|{S} ship{s} with {A} {V}"""
    ),
    "owner": _l(
        """{S} is handled by {V} now|{V} write{s} {S}|{V} {be} doing {S} from now on|
{S} is {V}'s job now|{V} look{s} after {S} these days|{V} has {S} this month|{V} run{s} {S}
now that {X} left|{S} went from {X} to {V}|{V} do{es} {S} now|{V} picked up {S}|
{V} own{s} {S}|{S} {be} owned by {V}|{V} {be} responsible for {S}|{V} took over {S}
{T}|{X} handed {S} to {V}|{S} moved from {X} to {V}|{V} {be} on {S} this quarter|{S} is
assigned to {V}|{V} runs {S} now|{V} leads {S}|{V} {be} in charge of {S}|{S} belongs to {V}
now|{V} took over {S} from {X}|{X} passed {S} to {V}|{V} {be} looking after {S}|ownership of
{S} went to {V}|{S} was reassigned to {V}|{V} {be} on call for {S}"""
    ),
    "schedule": _l(
        """{S} {be} staffed {V}|{S} {be} {V} long|{S} last{s} {V}|{S} take{s} place {V}|
{S} {be} every {V}|
{S} {be} {V}|{S} run{s} {V}|{S} happen{s} {V}|we do {S} {V}|{S} moved to {V}|
{S} {be} now {V}|we moved {S} to {V}|{S} go{es} out {V}|{S} is scheduled {V}|from now on
{S} is {V}|{S} shifted from {X} to {V}|we changed {S} to {V}|{S} {be} {V} instead of {X}"""
    ),
    "limit": _l(
        """the {A} for {S} is {V}|{S} {have} a {A} of {V}|we raised the {A} of {S} to {V}|we
lowered the {A} for {S} to {V}|{S} {be} capped at {V}|the {A} is {V} now|{P} {A} is {V}|
we bumped the {A} to {V}|{S} get{s} a {A} of {V}|the {A} went from {X} to {V}|finance cut
the {A} to {V}|the {A} on {S} is now {V}|{S} {be} limited to {V}|we set the {A} to {V}"""
    ),
    "host": _l(
        """{S} run{s} on {V}|{S} {be} hosted on {V}|{S} live{s} on {V}|we moved {S} to {V}
{T}|{S} {be} in {V}|{S} {be} deployed to {V}|{S} sit{s} in {V}|{S} now run{s} in {V}|
we migrated {S} from {X} to {V}|{S} left {X} for {V}|{S} {be} served from {V}|{S} {be}
on {V} now, no more {X}|{S} {have} moved to {V}|!we shut down {S} in {X}|!we closed {X}"""
    ),
    "tool": _l(
        """{A} go{es} out with {V} now|{A} ship{s} with {V}|{S} {be} built on {V}|
{A} {be} in {V} now|{A} now live{s} in {V}|{S} {be} on {V} now|{V} is what we use for {A}|
we use {V} for {A}|{A} is {V} now|{A} goes through {V}|{S} use{s} {V} for {A}|
we switched {A} to {V}|we replaced {X} with {V} for {A}|{A} moved from {X} to {V}|we ditched
{X}, {A} is {V} now|{S} rel{ies} on {V} for {A}|all {A} runs on {V}|we picked {V} for {A}|
{A} is handled by {V}|!we stopped using {X} for {A}|!we dropped {X}"""
    ),
}

#: sentences that fill no slot: what people and teams also say, including look-alikes
NONE_FRAMES = _l(
    """{S} visited {C} {T}|{S} spent a week in {C} for a conference|{S} {be} in {C} this week
for work|{S} might move to {C} next year|{S} {be} thinking about moving to {C}|{S} lived in {C}
as a kid|{S} grew up in {C}|{S} flew to {C} for a wedding|{S} {have} a trip to {C} planned|
{S} went to {C} on holiday|{S} met an old friend in {C}|{S} {be} travelling around {C}|
are you still in {C}?|did you ever live in {C}?|how is the weather in {C}?|
{S} had an interview at {K} {T}|{S} might apply to {K}|{S} {have} a friend at {K}|
{S} {be} reading a book about {K}|{S} went to a talk by someone from {K}|
{S} baked bread {T}|{S} watched a great film {T}|{S} went for a long walk|{S} {be} so tired
today|{S} cooked dinner for friends|{S} had a great weekend|{S} cleaned the whole flat|
{S} {be} feeling a bit under the weather|{S} went to the dentist {T}|{S} painted the fence|
{S} {have} a cold|{S} fixed the bike|{S} went to a concert {T}|{S} lost {P} keys again|
happy birthday!|thanks so much!|congrats!|that sounds lovely|good luck with it|see you
tomorrow|sounds fun|oh no, sorry to hear that|what do you think?|how was the trip?|
the build is red again|can someone review my PR?|the tests are flaky on CI|{S} fixed the
login bug|we found a memory leak in {S}|{S} throws a 500 on empty input|the deploy failed
{T}|let's discuss the design tomorrow|{S} needs better error messages|I wrote a test for
{S}|we should add logging to {S}|the dashboard is slow today|who broke the main branch?|
the incident review is on Thursday|{S} had an outage {T}|I'm refactoring {S}|the PR for {S}
is ready|the migration script failed halfway|we need to document {S}|latency on {S} spiked
{T}|{S} timed out for a few users|we rolled back the release|there is a typo in the docs|
the meeting ran long|the coffee machine is broken again|it rained all day|the train was late
{T}|the kids loved the zoo|the neighbours had a party|the cat knocked over a plant|
we watched the match at the pub|{S} told a great story at dinner|{S} recommended a podcast|
{S} {be} learning to cook curry|{S} sent me photos of the beach|we talked about {C} for hours|
{S} asked about {K}|{S} complained about the rent|the landlord fixed the boiler|{S} bought
new running shoes|{S} {be} excited about the holidays|{S} {have} a dentist appointment
on Monday|{S} {be} planning a surprise party|good call|they need you|nice, well done|
that's huge|yes!|no way|ha, classic|fair enough|good riddance|what a week|I'm here if you need
anything|send photos!|enjoy it!|tell me everything!|how's the new setup?|any news?|
did you see the snow?|yes, the trains were a mess|the drummer?|proud of you|congratulations,
well deserved|sorry to hear that|is it helping?|ask me next year|cheaper?|much|noted|
I'll update the runbook|anyone around for a review?|the flaky test is back|ugh, I'll look|
time to clean up the old clusters|expect some angry emails|who's doing nights?|is there
parking?|sadly no|latency okay?|fine so far|any replicas?|not yet|was it worth it?|
that should calm things down|customers keep hitting it|let's tell the team|
{S} sent a long email about the offsite|{S} had lunch with the new hires|{S} gave a talk
at the meetup|the office is freezing today|the wifi is down again|{S} {be} on holiday
next week|{S} brought cake for everyone|{S} {be} off sick today|the printer jammed again"""
)


_OBJECT = {"I": "me", "we": "us"}
#: words a filler's comma lowers at the start of what follows
_LOWER = {"We", "The", "There", "Our", "My", "His", "Her", "From", "All", "For", "Home", "Work"}


def _agree(frame: str, subj: Subject) -> str:
    for key, value in _AGREE[subj.person].items():
        frame = frame.replace("{" + key + "}", value)
    return frame


def _fill(frame: str, parts: dict[str, tuple[str, str]]) -> tuple[list[str], list[str]]:
    """Tokens and tags of a frame whose placeholders name ``(text, tag)`` parts."""
    tokens: list[str] = []
    tags: list[str] = []
    for piece in re.split(r"(\{[A-Z]\})", frame):
        if not piece:
            continue
        if re.fullmatch(r"\{[A-Z]\}", piece):
            text, tag = parts[piece[1]]
        else:
            text, tag = piece, "O"
        for tok in TOKEN.findall(text):
            tokens.append(tok)
            tags.append(tag)
    return tokens, tags


#: slots whose value is one pick from a list, and slots whose value comes with its aspect
_PLAIN: dict[str, list[str]] = {
    "home": CITIES,
    "employer": COMPANIES,
    "role": ROLES,
    "partner": PARTNERS,
    "manager": PARTNERS,
    "diet": DIETS,
    "allergy": ALLERGENS,
    "team": TEAMS,
    "habit": HABITS,
    "education": SCHOOLS,
    "owner": OWNERS,
    "schedule": WHENS,
    "host": HOSTS,
}
_WITH_ASPECT: dict[str, list[tuple[str, list[str]]]] = {
    "version": DEPENDENCIES,
    "limit": LIMITS,
    "tool": TOOLS,
}


def _value(slot: str, rng: random.Random) -> tuple[str, str, list[str]]:
    """``(value, aspect, pool)`` for a slot: a value, its aspect and where an old one comes from."""
    if slot in _PLAIN:
        return rng.choice(_PLAIN[slot]), "", _PLAIN[slot]
    if slot in _WITH_ASPECT:
        aspect, values = rng.choice(_WITH_ASPECT[slot])
        return rng.choice(values), aspect, values
    if slot == "age":
        n = str(rng.randint(3, 95))
        return n, "", [str(i) for i in range(3, 95)]
    if slot == "count":
        return rng.choice(NUMBERS), rng.choice(COUNT_NOUNS), NUMBERS
    if slot == "preference":
        if rng.random() < 0.5:
            return rng.choice(FAVOURITES), rng.choice(FAVOURITE_OF), FAVOURITES
        aspect, values = rng.choice(PREFERENCES)
        return rng.choice(values), aspect, values
    if slot == "hobby":  # likes: several hold at once ("likes tea", "likes coffee")
        pool = FAVOURITES if rng.random() < 0.4 else HOBBIES
        return rng.choice(pool), "", pool
    raise KeyError(slot)


def _subject_for(slot: str, rng: random.Random) -> Subject:
    if slot in ("version", "limit", "host") or (slot == "tool" and rng.random() < 0.5):
        return thing_subject(rng)
    if slot == "owner":
        return Subject(rng.choice(OWNED), "", "3s")
    if slot == "schedule":
        if rng.random() < 0.3:
            return person_subject(rng)
        return Subject(rng.choice(EVENTS), "", "3s")
    if slot == "count" and rng.random() < 0.25:
        return thing_subject(rng)
    return person_subject(rng)


def _decorate(tokens: list[str], tags: list[str], rng: random.Random) -> None:
    """A filler before, a tail after, or the sentence as said by someone ("Ann: ...")."""
    r = rng.random()
    if r < 0.25:
        words = rng.choice(FILLERS) if r < 0.12 else rng.choice(BEFORE)
        head = [*TOKEN.findall(words), ","]
        if tokens and tokens[0] in _LOWER:
            tokens[0] = tokens[0].lower()
        tokens[:0] = head
        tags[:0] = ["O"] * len(head)
    r = rng.random()
    if r < 0.2:
        tail = [",", *TOKEN.findall(rng.choice(TAILS))]
        tokens += tail
        tags += ["O"] * len(tail)
    elif r < 0.5:
        tail = ([","] if rng.random() < 0.4 else []) + TOKEN.findall(rng.choice(AFTER))
        tokens += tail
        tags += ["O"] * len(tail)
    if rng.random() < 0.2:
        head = [rng.choice(NAMES), ":"]
        tokens[:0] = head
        tags[:0] = ["O", "O"]
    tokens.append(rng.choice([".", ".", ".", "!", ""]) or ".")
    tags.append("O")


def _capitalise(tokens: list[str]) -> None:
    for i, tok in enumerate(tokens):
        if re.match(r"\w", tok):
            tokens[i] = tok[0].upper() + tok[1:]
            return


def example(slot: str, rng: random.Random) -> Example:
    """One sentence of ``slot`` (or ``none``)."""
    if slot == "none":
        frame = rng.choice(NONE_FRAMES)
        subj = person_subject(rng) if rng.random() < 0.7 else thing_subject(rng)
        parts = {
            "S": (subj.text, "O"),
            "P": (subj.possessive, "O"),
            "C": (rng.choice(CITIES), "O"),
            "K": (rng.choice(COMPANIES), "O"),
            "T": (rng.choice(TIMES), "O"),
        }
        tokens, tags = _fill(_agree(frame, subj), parts)
        _capitalise(tokens)
        _decorate(tokens, tags, rng)
        return Example(tuple(tokens), tuple(tags), "none", False)
    frame = rng.choice(FRAMES[slot])
    ending = frame.startswith("!")
    frame = frame.lstrip("!")
    subj = _subject_for(slot, rng)
    value, aspect, pool = _value(slot, rng)
    old = rng.choice([v for v in pool if v != value] or pool)
    parts = {
        "S": (subj.text, "S"),
        "M": (_OBJECT.get(subj.text, subj.text), "S"),
        "P": (subj.possessive, "S"),
        "V": (value, "V"),
        "X": (old, "X"),
        "A": (aspect or "", "A"),
        "T": (rng.choice(TIMES), "O"),
        "R": (rng.choice(ROLES), "O"),
    }
    tokens, tags = _fill(_agree(frame, subj), parts)
    _capitalise(tokens)
    _decorate(tokens, tags, rng)
    return Example(tuple(tokens), tuple(tags), slot, ending)


def generate(n_per_slot: int, *, seed: int = 35, none_share: float = 2.0) -> Iterator[Example]:
    """``n_per_slot`` sentences of every slot and ``none_share`` times as many of ``none``."""
    rng = random.Random(seed)
    for slot in SLOTS:
        count = int(n_per_slot * none_share) if slot == "none" else n_per_slot
        for _ in range(count):
            yield example(slot, rng)
